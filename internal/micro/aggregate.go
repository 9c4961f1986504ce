package micro

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sagebench/sagebench/internal/fedavg"
)

// aggregateCases is the FedAvg matrix: clients × dim × workers.
func aggregateCases(fx *fixture) []Case {
	var cases []Case
	for _, c := range aggClients {
		for _, d := range aggDims {
			for _, w := range aggWorkers {
				cases = append(cases, Case{
					Bench:  "Aggregate",
					Sub:    fmt.Sprintf("clients=%d/dim=%d/workers=%s", c, d, workersName(w)),
					Mohawk: mohawkName(c, d, w),
					Run:    benchAggregate(fx, c, d, w),
				})
			}
		}
	}
	return cases
}

// mohawkName is the contract's name of an aggregation case.
func mohawkName(clients, dim, workers int) string {
	w := fmt.Sprint(workers)
	if workers == fedavg.Auto {
		w = "Auto"
	}
	return fmt.Sprintf("BenchmarkAggregateParallel/clients%d_dim%d/workers%s", clients, dim, w)
}

func workersName(w int) string {
	if w == fedavg.Auto {
		return "auto"
	}
	return fmt.Sprint(w)
}

func benchAggregate(fx *fixture, clients, dim, workers int) func(b *testing.B) {
	return func(b *testing.B) {
		ups := fx.updates(clients, dim)
		wts := weights(clients)
		cfg := fedavg.Config{Workers: workers}
		if workers == fedavg.Auto {
			cfg.Machine = fx.machine()
		}
		agg, err := fedavg.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer agg.Close()
		dst := make([]float32, dim)
		if err := agg.FedAvg(dst, ups, wts); err != nil { // warm the pool
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(clients) * int64(dim) * 4)
		b.ResetTimer()
		cpu := startCPU()
		for range b.N {
			if err := agg.FedAvg(dst, ups, wts); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cpu.report(b)
		if workers == fedavg.Auto {
			// The count auto chose, so a report can judge the choice
			// against the fixed counts' own measurements.
			b.ReportMetric(float64(cfg.Machine.Workers(clients, dim, workers)), "workers")
		}
	}
}

// floorCases reads every distinct byte count of the aggregation matrix
// with the explicit worker counts of the matrix.
func floorCases(fx *fixture) []Case {
	var sizes []int
	for _, c := range aggClients {
		for _, d := range aggDims {
			sizes = append(sizes, c*d*4)
		}
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	var cases []Case
	for _, n := range sizes {
		for _, w := range aggWorkers {
			if w == fedavg.Auto {
				continue
			}
			cases = append(cases, Case{
				Bench: "MemoryFloor",
				Sub:   fmt.Sprintf("bytes=%d/workers=%d", n, w),
				Run:   benchFloor(fx, n, w),
			})
		}
	}
	return cases
}

func benchFloor(fx *fixture, bytes, workers int) func(b *testing.B) {
	return func(b *testing.B) {
		data := fx.data()[:bytes/4]
		f := newFloor()
		defer f.close()
		sink := f.sum(data, workers)
		b.ReportAllocs()
		b.SetBytes(int64(bytes))
		b.ResetTimer()
		cpu := startCPU()
		for range b.N {
			sink += f.sum(data, workers)
		}
		b.StopTimer()
		cpu.report(b)
		if sink != sink {
			b.Log("NaN sum") // keeps sink alive
		}
	}
}
