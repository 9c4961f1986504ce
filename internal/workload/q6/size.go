package q6

import "github.com/sagebench/sagebench/internal/workload"

var _ workload.Sizer = (*Config)(nil)

// Size is one phase of the burst schedule per policy.
func (c *Config) Size() workload.Size {
	return workload.Repeated(float64(len(c.Policies)), c.Schedule, "q6.policies × q6.schedule")
}
