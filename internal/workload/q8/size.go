package q8

import "github.com/sagebench/sagebench/internal/workload"

var _ workload.Sizer = (*Config)(nil)

// Size is one phase of the drill's load.
func (c *Config) Size() workload.Size {
	return workload.Repeated(1, c.Load.Schedule, "q8.load.schedule")
}
