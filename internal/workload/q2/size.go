package q2

import "github.com/sagebench/sagebench/internal/workload"

var _ workload.Sizer = (*Config)(nil)

// Size is rounds × policies phases of the schedule each.
func (c *Config) Size() workload.Size {
	return workload.Repeated(float64(c.Rounds)*float64(len(c.Policies)), c.Schedule, "q2.rounds × q2.policies × q2.schedule")
}
