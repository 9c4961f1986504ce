package q1

import "github.com/sagebench/sagebench/internal/workload"

var _ workload.Sizer = (*Config)(nil)

// Size is one phase of the transaction schedule.
func (c *Config) Size() workload.Size {
	return workload.Repeated(1, c.Schedule, "q1.schedule")
}
