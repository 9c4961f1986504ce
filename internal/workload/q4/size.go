package q4

import "github.com/sagebench/sagebench/internal/workload"

var _ workload.Sizer = (*Config)(nil)

// Size is at most max_probes probes per scale; their rates follow the
// target's frontier, so the arrivals are not known in advance.
func (c *Config) Size() workload.Size {
	n := float64(len(c.Scales)) * float64(c.MaxProbes)
	return workload.Size{Phases: n, Span: workload.Scale(c.Probe, n), Terms: "q4.scales × q4.max_probes × q4.probe"}
}
