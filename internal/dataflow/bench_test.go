package dataflow_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/sagebench/sagebench/internal/dataflow"
)

func noop(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
	return emit(in)
}

// benchEngine deploys three no-op stages with parallelism 2 and starts
// Serve; it returns the engine and a function that waits for Serve.
func benchEngine(b *testing.B, opts dataflow.LocalOptions) (*dataflow.Local, func()) {
	b.Helper()
	reg := dataflow.NewRegistry()
	if err := reg.RegisterFunc("noop", noop); err != nil {
		b.Fatal(err)
	}
	g := dataflow.Graph{Parallelism: 2, Stages: []dataflow.StageConfig{
		{Name: "a", Operator: "noop"}, {Name: "b", Operator: "noop"}, {Name: "c", Operator: "noop"},
	}}
	eng, err := dataflow.NewLocal(reg, opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := eng.Deploy(ctx, g); err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	return eng, func() {
		if err := <-served; err != nil {
			b.Error(err)
		}
	}
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("r%08d", i)
	}
	return out
}

// BenchmarkLocalThroughput pushes b.N records through three no-op stages
// (parallelism 2) as fast as one submitter can and reports records/s.
func BenchmarkLocalThroughput(b *testing.B) {
	for _, ser := range []bool{false, true} {
		b.Run(fmt.Sprintf("serialize=%v", ser), func(b *testing.B) {
			id := ids(b.N)
			payload := make([]byte, 64)
			eng, wait := benchEngine(b, dataflow.LocalOptions{Serialize: ser, ExpectedRecords: b.N})
			b.ReportAllocs()
			b.ResetTimer()
			start, cpu := time.Now(), processCPU()
			go func() {
				for i := range b.N {
					if err := eng.Submit(context.Background(), dataflow.Record{ID: id[i], Payload: payload}); err != nil {
						b.Error(err)
						break
					}
				}
				eng.CloseInput()
			}()
			n := 0
			for range eng.Results() {
				n++
			}
			elapsed, cpu := time.Since(start), processCPU()-cpu
			wait()
			if n != b.N {
				b.Fatalf("got %d results, want %d", n, b.N)
			}
			b.ReportMetric(float64(n)/elapsed.Seconds(), "records/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/record")
		})
	}
}

// BenchmarkLocalHopLatency submits records on an absolute schedule at
// 50,000 records/s and reports the distribution of the per-hop queueing
// latency: Started - Enqueued at each stage (for stage 0 from Submit, for
// the others from the upstream emit), i.e. the handoff between stages.
// The source busy-waits (yielding) for each intended time: a timer sleep
// shorter than a millisecond rounds up to one on an idle Go runtime, which
// would submit bursts of 50 instead of a paced stream. It also reports the
// source's own lag behind its schedule.
func BenchmarkLocalHopLatency(b *testing.B) {
	const rate = 50_000
	hops := hdrhistogram.New(1, int64(time.Second), 3)
	lag := hdrhistogram.New(1, int64(time.Second), 3)
	eng, wait := benchEngine(b, dataflow.LocalOptions{ExpectedRecords: b.N})
	id := ids(b.N)
	interval := time.Second / rate
	b.ResetTimer()
	start := time.Now()
	go func() {
		for i := range b.N {
			due := start.Add(time.Duration(i) * interval)
			for time.Now().Before(due) {
				runtime.Gosched()
			}
			_ = lag.RecordValue(max(int64(time.Since(due)), 1))
			_ = eng.Submit(context.Background(), dataflow.Record{ID: id[i], Meta: dataflow.Metadata{Intended: due}})
		}
		eng.CloseInput()
	}()
	for r := range eng.Results() {
		for _, h := range r.Hops {
			_ = hops.RecordValue(max(int64(h.Queue()), 1))
		}
	}
	elapsed := time.Since(start)
	wait()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
	for _, q := range []struct {
		p    float64
		unit string
	}{{50, "hop-p50-µs"}, {99, "hop-p99-µs"}, {99.9, "hop-p99.9-µs"}} {
		b.ReportMetric(float64(hops.ValueAtQuantile(q.p))/1e3, q.unit)
	}
	b.ReportMetric(float64(lag.ValueAtQuantile(99))/1e3, "source-lag-p99-µs")
}
