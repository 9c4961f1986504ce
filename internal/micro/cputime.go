package micro

import "testing"

// cpuMeter reports the process CPU time per op as "cpu-ns/op" next to
// ns/op. On a machine shared with other work, wall time includes the time
// a worker waits to be scheduled; CPU time does not, so the ratio of two
// cases at the same worker count is far less noisy in cpu-ns/op.
type cpuMeter struct {
	start int64
	ok    bool
}

// startCPU begins measuring; call it right after b.ResetTimer.
func startCPU() cpuMeter {
	ns, ok := processCPU()
	return cpuMeter{ns, ok}
}

// report ends the measurement and reports it.
func (m cpuMeter) report(b *testing.B) {
	end, ok := processCPU()
	if m.ok && ok && b.N > 0 {
		b.ReportMetric(float64(end-m.start)/float64(b.N), "cpu-ns/op")
	}
}
