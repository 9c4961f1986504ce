//go:build linux

package load

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time (user + system) this process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPacerCPU is the pacer's own cost: a constant schedule with a
// no-op hit, waited for precisely (FineGap < 0: an OS-thread sleep per
// arrival), on the runtime timer alone (Slack < 0, the pacer before issue
// 29), or on the runtime timer with the kernel-timer backstop at Slack
// (the default; 850 µs; and issue 29's rule, which kept one expiry for
// a slack's span of arrivals). It reports the process's CPU per arrival
// (system time included: a wake-up is mostly kernel time) and the
// dispatch lag. With no-op hits the process is otherwise idle: the worst
// case for the runtime timer's lag and for the backstop's wake-ups.
func BenchmarkPacerCPU(b *testing.B) {
	for _, rate := range []float64{5000, 10000} {
		for _, mode := range []struct {
			name                 string
			fineGap, slack, step time.Duration
		}{
			{"precise", -1, 0, 0},
			{"timer-only", 0, -1, 0},
			{"default", 0, 0, 0},
			{"issue29-rule", 0, DefaultSlack, DefaultSlack},
			{"slack850", 0, 850 * time.Microsecond, 0},
		} {
			b.Run(fmt.Sprintf("rate=%.0f/%s", rate, mode.name), func(b *testing.B) {
				s, err := NewSchedule(ScheduleConfig{Process: ProcessConstant, Rate: rate, Count: b.N}, 1)
				if err != nil {
					b.Fatal(err)
				}
				d := &Driver{FineGap: mode.fineGap, Slack: mode.slack, step: mode.step}
				cpu0 := processCPU(b)
				b.ResetTimer()
				rep := d.Run(context.Background(), s, func(context.Context, int, time.Time) {})
				b.StopTimer()
				b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/arrival")
				b.ReportMetric(float64(rep.DispatchLag.P50.Microseconds()), "lag-p50-µs")
				b.ReportMetric(float64(rep.DispatchLag.P99.Microseconds()), "lag-p99-µs")
			})
		}
	}
}
