package presenter

import (
	"cmp"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
)

// Run is what the presenter renders of one repetition: its record, its
// Q's catalog entry and the phases it ran (in run order).
type Run struct {
	Record *record.Run
	Spec   workload.Spec
	Phases []summary.Phase
}

// answer is the run's answer sentence, or why there is none.
func (r Run) answer() string {
	if r.Record.Result == nil || r.Record.Result.Answer == "" {
		return "no answer: the run did not finish"
	}
	return r.Record.Result.Answer
}

// phaseKey names a phase element in tables and bench names.
func (r Run) phaseKey() string {
	if r.Spec.PhaseLabel != "" {
		return r.Spec.PhaseLabel
	}
	return "phase"
}

// configGroups returns the groups of one configuration each: phase×type
// when the phases are named, else per type; phases in run order.
func (r Run) configGroups() []record.Group {
	named := len(r.Phases) > 0 && r.Phases[0].Name != ""
	var out []record.Group
	for _, g := range r.Record.Summary.Groups {
		_, hasType := g.Labels[summary.LabelType]
		_, hasPhase := g.Labels[summary.LabelPhase]
		want := 1
		if named {
			want = 2
		}
		if hasType && hasPhase == named && len(g.Labels) == want {
			out = append(out, g)
		}
	}
	order := map[string]int{}
	for i, p := range r.Phases {
		order[p.Name] = i
	}
	slices.SortStableFunc(out, func(a, b record.Group) int {
		return cmp.Compare(order[a.Labels[summary.LabelPhase]], order[b.Labels[summary.LabelPhase]])
	})
	return out
}

// phasesDuration is the wall time of phase name, or of all phases ("").
func (r Run) phasesDuration(name string) time.Duration {
	var d time.Duration
	for _, p := range r.Phases {
		if name == "" || p.Name == name {
			d += p.Duration()
		}
	}
	return d
}
