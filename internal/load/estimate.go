package load

import (
	"math"
	"time"
)

// MaxDuration bounds schedule.duration: no arrival can be later (an
// offset past it is refused while drawing too).
const MaxDuration = maxOffset

// Estimate is, by arithmetic on c alone (nothing drawn or allocated),
// how many arrivals the schedule holds at most and how long it runs:
// count when set, else the peak rate × duration; the span is duration
// when set, else count ÷ the mean rate. A trace without count is 0
// arrivals here (its file is bounded when read). Callers bound whole
// plans with it before any schedule exists.
func (c ScheduleConfig) Estimate() (arrivals float64, span time.Duration) {
	peak := math.Max(c.Rate, math.Max(c.BurstRate, c.RampTo))
	mean := c.Rate
	if c.Process == ProcessRamp {
		mean = (c.Rate + c.RampTo) / 2
	}
	switch {
	case c.Count > 0:
		arrivals = float64(c.Count)
	case c.Process != ProcessTrace:
		arrivals = peak * c.Duration.Seconds()
	}
	span = c.Duration
	if span == 0 && mean > 0 {
		span = time.Duration(math.Min(float64(c.Count)/mean, MaxDuration.Seconds()) * float64(time.Second))
	}
	return arrivals, span
}
