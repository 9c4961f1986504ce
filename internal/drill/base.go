package drill

import (
	"fmt"
	"time"

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
	d := b.Drill
	d.Events = events
	if lead, _, _ := d.LeadIn(); lead > 0 {
		w := d.Series.WithDefaults().Width
		p.Notes = append(p.Notes, fmt.Sprintf("steady state: the windows from %v to the first event at %v, %d of %v (at least %d are required)",
			w, lead, max(int((lead-w)/w), 0), w, minSteadyWindows))
		if _, need, ok := d.LeadIn(); !ok {
			p.Notes = append(p.Notes, fmt.Sprintf("WARNING: too short a lead-in for a steady state (at least %v): the run will not be comparable", need))
		}
	}
	for _, e := range Expand(events) {
		p.Notes = append(p.Notes, "event: "+e.String())
	}
	return p, nil
}

// LeadIn is when the first event happens, from the start of the load,
// and the least lead-in a steady-state verdict needs: one window of
// warm-up and minSteadyWindows windows before it. False when it is
// shorter (no events: true).
func (c Config) LeadIn() (lead, need time.Duration, ok bool) {
	w := c.Series.WithDefaults().Width
	need = time.Duration(minSteadyWindows+1) * w
	ev := Expand(c.Events)
	if len(ev) == 0 {
		return 0, need, true
	}
	lead = ev[0].At
	for _, e := range ev {
		lead = min(lead, e.At)
	}
	return lead, need, lead >= need
}
