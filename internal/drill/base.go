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

// Plan is the drill's plan for seed: one phase of the load (a note when
// its rate is set by the capacity probe, unknown until it has run), its
// events as notes.
func (b *Base) Plan(section, phase string, seed int64, events []Event) (workload.Plan, error) {
	var p workload.Plan
	if l := b.Load; l.Utilisation > 0 {
		pr := l.Probe.WithDefaults()
		p.Notes = append(p.Notes,
			fmt.Sprintf("phase capacity: closed-loop probe of the mix, %d clients doubling every %v up to %d, until the throughput gains less than %.0f %%",
				pr.Start, pr.Step, pr.Max, 100*pr.Gain),
			fmt.Sprintf("phase %s: %s at %.2f × the measured capacity over %v (its rate is known once the probe has run); events count from its start",
				phase, l.Schedule.Process, l.Utilisation, l.Schedule.Duration))
	} else {
		s, err := load.NewSchedule(l.Schedule, seed)
		if err != nil {
			return workload.Plan{}, fmt.Errorf("%s.load.%w", section, err)
		}
		p.Phases = []workload.PlannedPhase{{Name: phase, Process: l.Schedule.Process,
			Requests: s.Len(), Rate: s.Rate(), Span: s.Span(), Mix: l.Mix(seed, s.Len()), Tokens: l.Tokens(seed, s)}}
	}
	for _, e := range Expand(events) {
		p.Notes = append(p.Notes, "event: "+e.String())
	}
	return p, nil
}
