package workload

import (
	"time"

	"github.com/sagebench/sagebench/internal/load"
)

// Size is how much one repetition of a workload plans, by arithmetic on
// its configuration alone (no schedule drawn, nothing allocated), so
// that a plan can be bounded before it exists: `q2.rounds: 100000000`
// asked for 24 GB of plan before this.
type Size struct {
	Phases   float64       // sub-runs (policies × rounds, scales × probes …)
	Arrivals float64       // requests scheduled, over all phases (an upper estimate; 0: set by the target, as Q4's)
	Span     time.Duration // schedule time over all phases (saturates at a year)
	// Terms names the keys whose product the size is, for messages
	// (e.g. "q2.rounds × q2.policies × q2.schedule").
	Terms string
}

// Sizer is implemented by every Q's Config (runconfig refuses a plan
// over its bounds before Plan or Run allocates it).
type Sizer interface {
	Size() Size
}

// maxSpan is where Size.Span saturates.
const maxSpan = 365 * 24 * time.Hour

// Repeated is the size of n phases of schedule each.
func Repeated(n float64, schedule load.ScheduleConfig, terms string) Size {
	a, s := schedule.Estimate()
	return Size{Phases: n, Arrivals: n * a, Span: Scale(s, n), Terms: terms}
}

// Scale multiplies a duration by n, saturating instead of overflowing.
func Scale(d time.Duration, n float64) time.Duration {
	if v := float64(d) * n; v < float64(maxSpan) {
		return time.Duration(v)
	}
	return maxSpan
}
