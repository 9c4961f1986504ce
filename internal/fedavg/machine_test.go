package fedavg

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

func TestMachineWorkers(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.Workers(tc.clients, tc.dim, tc.req); got != tc.w {
				t.Fatalf("%v.Workers(%d, %d, %d) = %d, want %d", tc.m, tc.clients, tc.dim, tc.req, got, tc.w)
			}
		})
	}
	if err := (Config{Machine: Machine{MaxWorkers: -1}}).Validate(); err == nil {
		t.Fatal("negative ceiling accepted")
	}
}

func TestFitMachine(t *testing.T) {
	sizes := []int64{1 << 20, 2 << 20, 4 << 20, 8 << 20}
	tests := []struct {
		name string
		ns   [][]float64 // per size: 1, 2, 3 workers
		want Machine
	}{
		{"two workers never pay", [][]float64{{10, 12, 13}, {20, 22, 23}, {40, 41, 42}, {80, 79, 81}}, Machine{BytesPerWorker: 8 << 20, MaxWorkers: 1}},
		// gain -2 at 2 MiB, +2 at 4 MiB: crossover at 3 MiB.
		{"crossover interpolated", [][]float64{{10, 14, 15}, {20, 22, 23}, {40, 38, 37}, {80, 60, 59}}, Machine{BytesPerWorker: 3 << 19, MaxWorkers: 2}},
		{"three workers add speed", [][]float64{{10, 9, 9}, {20, 15, 14}, {40, 30, 26}, {80, 50, 40}}, Machine{BytesPerWorker: 1 << 19, MaxWorkers: 3}},
		// two workers lose even at 8 MiB, three win there: auto must give
		// three at 8 MiB (8 MiB / 3 per worker), not two.
		{"only more than two workers pay", [][]float64{{10, 12, 13}, {20, 22, 23}, {40, 41, 42}, {80, 81, 60}}, Machine{BytesPerWorker: (8 << 20) / 3, MaxWorkers: 3}},
		{"a win that does not last is no crossover", [][]float64{{10, 9, 9}, {20, 21, 22}, {40, 41, 42}, {80, 60, 61}}, Machine{BytesPerWorker: (4<<20 + (4<<20)/21) / 2, MaxWorkers: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fitMachine(sizes, []int{1, 2, 3}, tc.ns)
			if got != tc.want {
				t.Fatalf("fitMachine = %+v, want %+v", got, tc.want)
			}
			// auto at the largest size gives the fastest count probed there
			// (at most GOMAXPROCS)
			last, best := tc.ns[len(tc.ns)-1], 0
			for j := range last {
				if last[j] < 0.95*last[best] {
					best = j
				}
			}
			want := min(best+1, runtime.GOMAXPROCS(0))
			if w := got.Workers(4, int(sizes[len(sizes)-1]/16), Auto); w != want {
				t.Errorf("auto at %d bytes = %d workers, want %d (the probe's fastest: %d)", sizes[len(sizes)-1], w, want, best+1)
			}
		})
	}
}

// TestProbeWithAFakeClock: with a clock that advances 10µs per reading
// every operation takes the same time, so one worker is as good as any;
// the real trial runs (its FedAvg calls), timed by the fake clock.
func TestProbeWithAFakeClock(t *testing.T) {
	var now time.Time
	clock := func() time.Time { now = now.Add(10 * time.Microsecond); return now }
	res, err := Probe(ProbeConfig{MaxWorkers: 2, Sizes: []int64{64 << 10, 128 << 10}, Rounds: 2, MinTime: 5 * time.Microsecond, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	// Equal times do not grow with size: inconsistent, re-probed to the end.
	if res.Machine != (Machine{BytesPerWorker: 128 << 10, MaxWorkers: 1}) || len(res.Grid.Trials) != 2 || len(res.Grid.Trials[1]) != 2 ||
		fmt.Sprint(res.Grid.Workers) != "[1 2]" || res.Cost <= 0 || res.Consistent() || res.Attempts != 4 {
		t.Fatalf("probe %+v", res)
	}
	if _, err := Probe(ProbeConfig{Sizes: []int64{1 << 20, 1 << 19}}); err == nil {
		t.Fatal("descending sizes accepted")
	}
}

func TestProbeCounts(t *testing.T) {
	for max, want := range map[int]string{1: "[1]", 2: "[1 2]", 3: "[1 2 3]", 8: "[1 2 4 8]", 12: "[1 2 4 8 12]"} {
		if got := fmt.Sprint(probeCounts(max)); got != want {
			t.Errorf("probeCounts(%d) = %s, want %s", max, got, want)
		}
	}
}
