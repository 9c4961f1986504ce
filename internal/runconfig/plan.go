package runconfig

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/workload"
)

// Bounds of a whole plan, checked on the configuration (workload.Size)
// before any schedule of it is drawn: preflight plans every repetition
// up front, so a product of keys (rounds × policies × repetitions) that
// each pass their own check could still ask for gigabytes and hours of
// planning before a single request.
const (
	MaxPlanPhases   = 10_000           // sub-runs of one repetition
	MaxPlanArrivals = 100_000_000      // arrivals of all repetitions together
	MaxPlanSpan     = load.MaxDuration // schedule time of one repetition
)

// checkPlan refuses a configuration whose plan is over the bounds.
func checkPlan(cfg workload.Config, repeat int) error {
	sz, ok := cfg.(workload.Sizer)
	if !ok {
		return nil
	}
	s := sz.Size()
	switch {
	case s.Phases > MaxPlanPhases:
		return fmt.Errorf("the plan has %.0f phases per repetition (%s), more than %d; lower them", s.Phases, s.Terms, MaxPlanPhases)
	case s.Arrivals*float64(repeat) > MaxPlanArrivals:
		return fmt.Errorf("the plan has %.3g arrivals over %d repetition(s) (%s × repeat), more than %d; lower them", s.Arrivals*float64(repeat), repeat, s.Terms, MaxPlanArrivals)
	case s.Span > MaxPlanSpan:
		return fmt.Errorf("one repetition's schedules span %v (%s), more than %v; shorten them", s.Span, s.Terms, MaxPlanSpan)
	}
	return nil
}
