package summary

import (
	"fmt"
	"slices"
)

// rejectedTypes returns a reason for every request type of which every
// request of a phase was refused with a 4xx (other than 429, which is
// the target shedding load): the target never served that type (an
// unknown model, a wrong path, a bad key), so the phase measured nothing
// of it, and the run is not a measurement. Phases are told apart when
// the records name them; otherwise the run is one phase.
func (c *Collector) rejectedTypes() []string {
	phased := map[string]bool{} // types with a (phase, type) group
	for _, a := range c.groups {
		if _, ok := a.labels[LabelPhase]; ok && len(a.labels) == 2 {
			phased[a.labels[LabelType]] = true
		}
	}
	var out []string
	for _, a := range c.groups {
		typ, ok := a.labels[LabelType]
		if !ok || a.count == 0 || a.rejected < a.count {
			continue
		}
		phase, hasPhase := a.labels[LabelPhase]
		switch {
		case hasPhase && len(a.labels) == 2:
			out = append(out, fmt.Sprintf("phase %s: all %d %s requests were refused with a 4xx status; nothing of them was measured", phase, a.count, typ))
		case !hasPhase && len(a.labels) == 1 && !phased[typ]:
			out = append(out, fmt.Sprintf("all %d %s requests were refused with a 4xx status; nothing of them was measured", a.count, typ))
		}
	}
	slices.Sort(out)
	return out
}
