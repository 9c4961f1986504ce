package jetstream_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
)

// BenchmarkJetStreamNoop pushes b.N records through three no-op stages on
// an embedded server and reports end-to-end records/s and the per-hop
// queueing latency (Started - Enqueued at each stage: the handoff through
// JetStream). "saturated" submits from 16 goroutines as fast as the graph
// takes them, "one-submitter" from one; "paced-2k" submits on a schedule
// at 2,000 records/s, so the hop latency is the transport's, not a
// queue's, and "paced-10k" at 10,000 records/s (the target rate) from four
// submitters.
func BenchmarkJetStreamNoop(b *testing.B) {
	for _, tc := range []struct {
		name       string
		submitters int
		rate       int // records/s; 0 = as fast as possible
		par        int
	}{
		{"saturated", 16, 0, 4},
		{"one-submitter", 1, 0, 4},
		{"paced-2k", 1, 2000, 2},
		{"paced-10k", 4, 10000, 4},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := startServer(b)
			reg := dataflowtest.Registry(b, map[string]dataflow.OperatorFunc{"noop": dataflowtest.Noop})
			eng := newEngine(b, srv, jetstream.Config{Registry: reg, ResultsCapacity: 1024, Prefetch: 64})
			g := dataflowtest.Chain(tc.par, 1024, "noop", "noop", "noop")
			if err := eng.Deploy(context.Background(), g); err != nil {
				b.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { served <- eng.Serve(context.Background()) }()
			hops := hdrhistogram.New(1, int64(10*time.Second), 3)
			b.ResetTimer()
			start, cpu := time.Now(), processCPU()
			go submit(b, eng, b.N, tc.submitters, tc.rate, start)
			n := 0
			for r := range eng.Results() {
				n++
				for _, h := range r.Hops {
					_ = hops.RecordValue(max(int64(h.Queue()), 1))
				}
			}
			elapsed, cpu := time.Since(start), processCPU()-cpu
			if err := <-served; err != nil {
				b.Fatal(err)
			}
			if n != b.N {
				b.Fatalf("got %d results, want %d", n, b.N)
			}
			b.ReportMetric(float64(n)/elapsed.Seconds(), "records/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/record")
			b.ReportMetric(float64(hops.ValueAtQuantile(50))/1e3, "hop-p50-µs")
			b.ReportMetric(float64(hops.ValueAtQuantile(99))/1e3, "hop-p99-µs")
		})
	}
}

// processCPU is the CPU time (user + system) this process has used; the
// embedded server runs in it too.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// submit sends n records from k goroutines, paced at rate records/s from
// start when rate > 0, then closes the input.
func submit(b *testing.B, eng *jetstream.Engine, n, k, rate int, start time.Time) {
	var wg sync.WaitGroup
	payload := make([]byte, 64)
	for w := range k {
		wg.Go(func() {
			for i := w; i < n; i += k {
				if rate > 0 {
					time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
				}
				if err := eng.Submit(context.Background(), dataflow.Record{ID: fmt.Sprintf("r%08d", i), Payload: payload}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	eng.CloseInput()
}
