package q3

import (
	"math"

	"github.com/sagebench/sagebench/internal/workload"
)

var _ workload.Sizer = (*Config)(nil)

// Size is, per policy, the victim alone and then beside the aggressor's
// ramp.
func (c *Config) Size() workload.Size {
	n := float64(len(c.Policies))
	perPolicy := c.Victim.Rate*(c.Alone+c.Contended).Seconds() + math.Max(c.Aggressor.Rate, c.Aggressor.RampTo)*c.Contended.Seconds()
	return workload.Size{Phases: 2 * n, Arrivals: n * perPolicy, Span: workload.Scale(c.Alone+c.Contended, n),
		Terms: "q3.policies × (q3.alone + q3.contended) × the rates"}
}
