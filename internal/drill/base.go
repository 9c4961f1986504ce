package drill

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// Base is what every drill workload's configuration holds (yaml inline):
// its load, its drill timeline and its targets.
type Base struct {
	Load  Load   `yaml:"load" json:"load"`
	Drill Config `yaml:"drill" json:"drill"`
	// Targeting is the qN.target block.
	workload.Targeting `yaml:",inline" json:",inline"`
}

// Validate checks the load, the timeline of events (the drill's, which a
// Q may generate) and the targets against defs, naming keys under
// section (e.g. "q7").
func (b *Base) Validate(section string, events []Event, defs []result.Def) error {
	if err := b.Load.Validate(section + ".load"); err != nil {
		return err
	}
	d := b.Drill
	d.Events = events
	if err := d.Validate(section+".drill", b.Load.Span()); err != nil {
		return err
	}
	return b.Target.Validate(section+".target", workload.TargetDefs(defs...))
}

// Override applies --rate, --total-requests, --duration and --llm-ratio.
func (b *Base) Override(o workload.Overrides) []string {
	b.Load.Override(o)
	return nil
}

// Plan is the drill's plan for seed: one phase of the load, its events
// as notes.
func (b *Base) Plan(section, phase string, seed int64, events []Event) (workload.Plan, error) {
	s, err := load.NewSchedule(b.Load.Schedule, seed)
	if err != nil {
		return workload.Plan{}, fmt.Errorf("%s.load.%w", section, err)
	}
	p := workload.Plan{Phases: []workload.PlannedPhase{{Name: phase, Process: b.Load.Schedule.Process,
		Requests: s.Len(), Rate: s.Rate(), Span: s.Span(), Mix: b.Load.Mix(seed, s.Len()),
		Tokens: b.Load.Tokens(seed, s)}}}
	for _, e := range Expand(events) {
		p.Notes = append(p.Notes, "event: "+e.String())
	}
	return p, nil
}
