package load

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkDispatch measures the driver's cost per arrival: a schedule of
// b.N arrivals all due at once, with a no-op hit, for the worker pool and
// for one goroutine per arrival.
func BenchmarkDispatch(b *testing.B) {
	for _, mode := range []struct {
		name  string
		spawn bool
	}{{"pool", false}, {"spawn", true}} {
		b.Run(mode.name, func(b *testing.B) {
			s := Schedule{Offsets: make([]time.Duration, b.N)}
			d := &Driver{Spawn: mode.spawn}
			b.ReportAllocs()
			b.ResetTimer()
			rep := d.Run(context.Background(), s, func(context.Context, int, time.Time) {})
			if rep.Completed != b.N {
				b.Fatalf("completed %d of %d", rep.Completed, b.N)
			}
		})
	}
}

// BenchmarkPacedLag runs a real-time constant schedule with a hit that
// takes 1 ms (so that many are in flight) and reports the dispatch lag
// quantiles. ns/op is wall time per arrival (≈ 1/rate).
func BenchmarkPacedLag(b *testing.B) {
	for _, rate := range []float64{5000, 20000} {
		for _, spawn := range []bool{false, true} {
			name := fmt.Sprintf("rate=%.0f/spawn=%v", rate, spawn)
			b.Run(name, func(b *testing.B) {
				s, err := NewSchedule(ScheduleConfig{Process: ProcessConstant, Rate: rate, Count: b.N}, 1)
				if err != nil {
					b.Fatal(err)
				}
				d := &Driver{Spawn: spawn}
				b.ResetTimer()
				rep := d.Run(context.Background(), s, func(ctx context.Context, _ int, _ time.Time) {
					time.Sleep(time.Millisecond)
				})
				b.ReportMetric(float64(rep.DispatchLag.P50.Microseconds()), "lag-p50-µs")
				b.ReportMetric(float64(rep.DispatchLag.P99.Microseconds()), "lag-p99-µs")
				b.ReportMetric(float64(rep.DispatchLag.Max.Microseconds()), "lag-max-µs")
			})
		}
	}
}
