package fedavg

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

func TestMachineWorkers(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	byDim := Machine{ByDim: []DimModel{{Dim: 4096, BytesPerWorker: 16 << 20, MaxWorkers: 1}, {Dim: 8192, BytesPerWorker: 2 << 20, MaxWorkers: 2}}}
	tests := []struct {
		name                 string
		m                    Machine
		clients, dim, req, w int
	}{
		{"fallback is ResolveWorkers", Machine{}, 512, 8192, Auto, ResolveWorkers(512, 8192, Auto)},
		{"explicit count", Machine{BytesPerWorker: 1}, 8, 8, 3, 3},
		{"one worker per 1 MiB", Machine{BytesPerWorker: 1 << 20, MaxWorkers: 64}, 128, 4096, Auto, min(2, procs)},
		{"ceiling", Machine{BytesPerWorker: 1 << 10, MaxWorkers: 1}, 512, 8192, Auto, 1},
		{"never more than clients", Machine{BytesPerWorker: 4, MaxWorkers: 64}, 1, 1 << 20, Auto, 1},
		{"at least one", Machine{BytesPerWorker: 1 << 30}, 2, 2, Auto, 1},
		{"by dim: 8192's model at 8192", byDim, 512, 8192, Auto, min(2, procs)},
		{"by dim: 4096's model at 4096, same bytes", byDim, 1024, 4096, Auto, 1},
		{"by dim: the largest dim not above", byDim, 256, 12000, Auto, min(2, procs)},
		{"by dim: below every dim, the first", byDim, 2048, 2048, Auto, 1},
		{"by dim: the top-level fields are not used", Machine{BytesPerWorker: 1, MaxWorkers: 8, ByDim: byDim.ByDim}, 64, 4096, Auto, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.Workers(tc.clients, tc.dim, tc.req); got != tc.w {
				t.Fatalf("%v.Workers(%d, %d, %d) = %d, want %d", tc.m, tc.clients, tc.dim, tc.req, got, tc.w)
			}
		})
	}
}

func TestMachineValidate(t *testing.T) {
	tests := []struct {
		name string
		m    Machine
		ok   bool
	}{
		{"zero", Machine{}, true},
		{"by dim", Machine{ByDim: []DimModel{{Dim: 4096}, {Dim: 8192, BytesPerWorker: 1, MaxWorkers: 2}}}, true},
		{"negative ceiling", Machine{MaxWorkers: -1}, false},
		{"dims descending", Machine{ByDim: []DimModel{{Dim: 8192}, {Dim: 4096}}}, false},
		{"dim 0", Machine{ByDim: []DimModel{{Dim: 0}}}, false},
		{"negative bytes at a dim", Machine{ByDim: []DimModel{{Dim: 1, BytesPerWorker: -1}}}, false},
		{"too many dims", Machine{ByDim: make([]DimModel, maxDims+1)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := (Config{Machine: tc.m}).Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// pairedGrid is a grid at dim 4096 over 1…8 MiB and counts 1, 2, 3 whose
// paired rounds say, per size, t(w) ÷ t(1) = ratios[size][w-1]: three
// rounds each, the one-worker time 1 ns per 60 bytes.
func pairedGrid(ratios [][]float64) Grid {
	g := NewGrid(4096, []int64{1 << 20, 2 << 20, 4 << 20, 8 << 20}, []int{1, 2, 3})
	for i, size := range g.Sizes {
		t1 := float64(size) / 60
		r := make([]float64, len(g.Workers))
		for j := range r {
			r[j] = t1 * ratios[i][j]
			g.add(i, j, r[j])
		}
		for range minRounds {
			g.addRound(i, r)
		}
	}
	return g
}

func TestFitDim(t *testing.T) {
	tests := []struct {
		name   string
		ratios [][]float64 // per size (1, 2, 4, 8 MiB): t(w) ÷ t(1) for w = 1, 2, 3
		want   DimModel
	}{
		{"two workers never pay", [][]float64{{1, 1.2, 1.3}, {1, 1.1, 1.15}, {1, 1.02, 1.05}, {1, 0.99, 1.01}}, DimModel{4096, 8 << 20, 1, 0}},
		{"a gain inside the margin is no win", [][]float64{{1, 1.2, 1.3}, {1, 1.1, 1.1}, {1, 0.98, 0.98}, {1, 0.975, 0.975}}, DimModel{4096, 8 << 20, 1, 0}},
		{"two from 4 MiB", [][]float64{{1, 1.2, 1.3}, {1, 1.01, 1.1}, {1, 0.9, 0.95}, {1, 0.7, 0.69}}, DimModel{4096, 2 << 20, 2, 4 << 20}},
		{"three workers add speed", [][]float64{{1, 0.9, 0.85}, {1, 0.8, 0.7}, {1, 0.7, 0.55}, {1, 0.6, 0.45}}, DimModel{4096, (1 << 20) / 3, 3, 1 << 20}},
		// two workers lose even at 8 MiB, three win there (two hyper-threads
		// of one core): auto gives three at 8 MiB, not two.
		{"only more than two workers pay", [][]float64{{1, 1.2, 1.3}, {1, 1.1, 1.2}, {1, 1.02, 1.05}, {1, 1.01, 0.75}}, DimModel{4096, (8 << 20) / 3, 3, 8 << 20}},
		{"a win that does not last is no crossover", [][]float64{{1, 0.9, 0.9}, {1, 1.0, 1.05}, {1, 0.9, 0.95}, {1, 0.8, 0.82}}, DimModel{4096, 2 << 20, 2, 4 << 20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := pairedGrid(tc.ratios)
			got := FitMachine([]Grid{g})
			if len(got.ByDim) != 1 || got.ByDim[0] != tc.want {
				t.Fatalf("FitMachine = %v, want %v", got, tc.want)
			}
			// auto at the largest size gives the count decided there (up to
			// GOMAXPROCS)
			last := len(g.Sizes) - 1
			want := min(g.Workers[g.decide(last)], runtime.GOMAXPROCS(0))
			if w := got.Workers(int(g.Sizes[last]/(4*4096)), 4096, Auto); w != want {
				t.Errorf("auto at %s = %d workers, want %d", sizeName(g.Sizes[last]), w, want)
			}
		})
	}
}

// TestDecideOnMediansNotMinima: one round in which two workers ran far
// faster (or one worker did) moves neither the median nor the decision.
func TestDecideOnMediansNotMinima(t *testing.T) {
	tests := []struct {
		name   string
		rounds [][]float64 // t(1), t(2) per round
		want   int
	}{
		{"one lucky two-worker round", [][]float64{{100, 100}, {100, 60}, {100, 101}, {100, 99}, {100, 100}}, 1},
		{"one lucky one-worker round", [][]float64{{100, 85}, {70, 85}, {100, 84}, {100, 86}, {100, 85}}, 2},
		{"a 2 % gain is a tie", [][]float64{{100, 98}, {100, 98}, {100, 98}}, 1},
		{"a 4 % gain wins", [][]float64{{100, 96}, {100, 96}, {100, 96}}, 2},
		{"no rounds: one worker", nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGrid(4096, []int64{16 << 20}, []int{1, 2})
			for _, r := range tc.rounds {
				g.addRound(0, r)
			}
			if got := g.Workers[g.decide(0)]; got != tc.want {
				t.Fatalf("decided %d workers (median ratio %.3f), want %d", got, g.Ratio(0, 0, 1), tc.want)
			}
		})
	}
}

// TestProbeWithAFakeClock: with a clock that advances 10µs per reading
// every operation takes the same time, so one worker is as good as any;
// the real trial runs (its FedAvg calls at both dims), timed by the fake
// clock.
func TestProbeWithAFakeClock(t *testing.T) {
	var now time.Time
	clock := func() time.Time { now = now.Add(10 * time.Microsecond); return now }
	res, err := Probe(ProbeConfig{MaxWorkers: 2, Sizes: []int64{64 << 10, 128 << 10}, Rounds: 3, MinTime: 5 * time.Microsecond, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	// Equal times do not grow with size: inconsistent, re-probed to the end.
	want := Machine{ByDim: []DimModel{{4096, 128 << 10, 1, 0}, {8192, 128 << 10, 1, 0}}}
	if !res.Machine.Equal(want) || len(res.Grids) != 2 || len(res.Grids[1].Trials[1]) != 2 || len(res.Grids[1].Rounds[1]) != 9 ||
		fmt.Sprint(res.Grids[0].Workers) != "[1 2]" || res.Cost <= 0 || res.Consistent() || res.Attempts != 3 {
		t.Fatalf("probe %+v", res)
	}
	for name, cfg := range map[string]ProbeConfig{
		"descending sizes":     {Sizes: []int64{1 << 20, 1 << 19}},
		"a size below one row": {Sizes: []int64{16 << 10, 1 << 20}},
		"descending dims":      {Dims: []int{8192, 4096}},
	} {
		if _, err := Probe(cfg); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestProbeCounts(t *testing.T) {
	for max, want := range map[int]string{1: "[1]", 2: "[1 2]", 3: "[1 2 3]", 8: "[1 2 4 8]", 12: "[1 2 4 8 12]"} {
		if got := fmt.Sprint(probeCounts(max)); got != want {
			t.Errorf("probeCounts(%d) = %s, want %s", max, got, want)
		}
	}
}
