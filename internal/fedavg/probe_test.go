package fedavg

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/fedavg/fedavgtest"
)

func probeSim(t *testing.T, m *fedavgtest.Machine) ProbeResult {
	t.Helper()
	res, err := Probe(ProbeConfig{MaxWorkers: 2, Trial: m.Trial})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// auto is the count the model gives clients×dim, with GOMAXPROCS at least
// 2 for the test (the models are of 2-core machines).
func auto(t *testing.T, m Machine, clients, dim int) int {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	return m.Workers(clients, dim, Auto)
}

func TestProbeSimulatedMachines(t *testing.T) {
	tests := []struct {
		name       string
		sim        *fedavgtest.Machine
		at16MiB    int // auto's count at 512×8192 and 1024×4096
		consistent bool
	}{
		{"quiet: two workers from the crossover up", fedavgtest.Quiet(), 2, true},
		{"steadily loaded: consistent, and wrong, which Revalidate heals", fedavgtest.Loaded(), 1, true},
		{"busier by the trial: trials never agree", &fedavgtest.Machine{Drift: 0.05}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := probeSim(t, tc.sim)
			if res.Consistent() != tc.consistent {
				t.Fatalf("consistent = %v, want %v (problems %v)", res.Consistent(), tc.consistent, res.Problems)
			}
			if !tc.consistent {
				if res.Attempts != 3 || !strings.Contains(res.Problems[0], "fastest trials differ") {
					t.Errorf("attempts %d, problems %v", res.Attempts, res.Problems)
				}
				return
			}
			if res.Attempts != 1 || auto(t, res.Machine, 512, 8192) != tc.at16MiB || auto(t, res.Machine, 1024, 4096) != tc.at16MiB {
				t.Errorf("attempts %d, machine %v, want %d workers at 16 MiB", res.Attempts, res.Machine, tc.at16MiB)
			}
			// two workers beat one by 3 % from 0.6·s/60 + 3 µs < 0.97·s/60,
			// s > 486 KB: from the 512 KiB size on, 256 KiB per worker.
			for _, d := range res.Machine.ByDim {
				if tc.at16MiB == 2 && d.BytesPerWorker != 256<<10 {
					t.Errorf("dim %d: bytes per worker %d, want 256 KiB", d.Dim, d.BytesPerWorker)
				}
			}
		})
	}
}

// TestProbeDecidesPerDimension: two workers cut tiles of dim/8
// coordinates, so whether they pay depends on the dimension. The probe
// decides at the dimensions it probes, and Auto serves each dim from its
// own evidence.
func TestProbeDecidesPerDimension(t *testing.T) {
	share := func(gain4096, gain8192 float64) func(int, int) float64 {
		return func(dim, _ int) float64 {
			if dim >= 8192 {
				return 1 - gain8192
			}
			return 1 - gain4096
		}
	}
	tests := []struct {
		name string
		sim  *fedavgtest.Machine
		dims []int
		want map[string]int // "clients×dim": auto's count
	}{
		{"2 workers gain 15 % at 8192, 2 % at 4096", &fedavgtest.Machine{Share: share(0.02, 0.15), Jitter: 0.02}, nil,
			map[string]int{"512×8192": 2, "128×8192": 2, "32×8192": 1, "1024×4096": 1, "512×4096": 1, "512×2048": 1}},
		{"the same machine probed at 4096 only: one worker at 512×8192", &fedavgtest.Machine{Share: share(0.02, 0.15), Jitter: 0.02}, []int{4096},
			map[string]int{"512×8192": 1, "1024×4096": 1}},
		{"2 workers gain 15 % at 4096, 2 % at 8192", &fedavgtest.Machine{Share: share(0.15, 0.02), Jitter: 0.02}, nil,
			map[string]int{"512×8192": 1, "1024×4096": 2, "512×2048": 2, "256×16384": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Probe(ProbeConfig{MaxWorkers: 2, Dims: tc.dims, Trial: tc.sim.Trial})
			if err != nil || !res.Consistent() {
				t.Fatalf("probe: %v %v", err, res.Problems)
			}
			for shape, want := range tc.want {
				var c, d int
				fmt.Sscanf(shape, "%d×%d", &c, &d)
				if got := auto(t, res.Machine, c, d); got != want {
					t.Errorf("auto at %s = %d workers, want %d (model %v)", shape, got, want, res.Machine)
				}
			}
		})
	}
}

// TestProbeIsStableOnANoisyMachine: a machine on which two workers gain
// 15 % at 16 MiB, and one-worker trials are now and then 20 % faster
// (lucky) with 10 % jitter on every trial. The minima of the cells say
// that one worker is as fast (the old rule would flip); the paired
// medians say two, in every run and in every revalidation.
func TestProbeIsStableOnANoisyMachine(t *testing.T) {
	noisy := func(seed uint64) *fedavgtest.Machine {
		return &fedavgtest.Machine{Share: func(int, int) float64 { return 0.85 }, Jitter: 0.1, Lucky: 0.2, Seed: seed}
	}
	for seed := range uint64(8) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			res := probeSim(t, noisy(seed))
			g := res.Grids[1]
			last := len(g.Sizes) - 1
			if minRatio := g.Min(last, 1) / g.Min(last, 0); minRatio < 0.95 {
				t.Fatalf("set-up: the minima say two workers by %.3f; want a machine on which they do not", minRatio)
			}
			if got := auto(t, res.Machine, 512, 8192); got != 2 || !res.Consistent() {
				t.Fatalf("auto at 512×8192 = %d (%v, problems %v), want 2", got, res.Machine, res.Problems)
			}
			for k := range uint64(3) {
				rv, err := Revalidate(ProbeConfig{MaxWorkers: 2, Trial: noisy(100 + 10*seed + k).Trial}, res.Grids)
				if err != nil {
					t.Fatal(err)
				}
				if got := auto(t, rv.Result.Machine, 512, 8192); got != 2 {
					t.Fatalf("revalidation %d (%s: %s) flipped auto at 512×8192 to %d", k, rv.Outcome, rv.Reason, got)
				}
				res = rv.Result
			}
		})
	}
}

// TestProbeHyperThreads: four workers on a machine of two cores with two
// hyper-threads each. Whether the two workers beyond the cores pay is the
// probe's to find; the ceiling follows.
func TestProbeHyperThreads(t *testing.T) {
	ht := func(share2, share4 float64) *fedavgtest.Machine {
		return &fedavgtest.Machine{Jitter: 0.02, Share: func(_, w int) float64 {
			if w >= 4 {
				return share4
			}
			return share2
		}}
	}
	tests := []struct {
		name    string
		sim     *fedavgtest.Machine
		ceiling int
		bpw     int64
	}{
		// at 512 KiB four workers already beat two: 128 KiB each
		{"hyper-threads pay 12 %", ht(0.6, 0.6*0.88), 4, 128 << 10},
		{"hyper-threads pay 1 %", ht(0.6, 0.6*0.99), 2, 256 << 10},
		{"hyper-threads cost 10 %", ht(0.6, 0.66), 2, 256 << 10},
		{"the first two CPUs are one core: only four pay", ht(1.0, 0.6), 4, 128 << 10},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // the simulated machine's CPUs: Workers clamps to them
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Probe(ProbeConfig{MaxWorkers: 4, Trial: tc.sim.Trial})
			if err != nil || !res.Consistent() {
				t.Fatalf("probe: %v %v", err, res.Problems)
			}
			exact := &fedavgtest.Machine{Share: tc.sim.Share} // the same machine without noise
			for _, d := range res.Machine.ByDim {
				if d.MaxWorkers != tc.ceiling || d.BytesPerWorker != tc.bpw {
					t.Errorf("dim %d: %v, want at most %d workers, %d bytes each", d.Dim, d, tc.ceiling, tc.bpw)
				}
				// Below the first win, one worker: 128 KiB each alone
				// would give two workers 256 KiB, 1.3-1.7× slower.
				for s := int64(256 << 10); s <= 16<<20; s *= 2 {
					w := res.Machine.Workers(int(s/int64(4*d.Dim)), d.Dim, Auto)
					tw, _ := exact.Trial(d.Dim, s, w)
					t1, _ := exact.Trial(d.Dim, s, 1)
					if tw > t1*1.03 {
						t.Errorf("dim %d, %d KiB: auto gives %d workers, %.0f ns against one worker's %.0f", d.Dim, s>>10, w, tw, t1)
					}
				}
			}
		})
	}
}

// TestPairedRoundsCancelDrift: on a machine that gets 2 % slower with
// every trial, one and two workers equally fast, the palindrome centres
// both counts' trials on the same moment: the paired ratio stays 1 (to
// second order), where timing them in turn (1, 2, 1, 2) would make two
// workers 2 % slower in every round.
func TestPairedRoundsCancelDrift(t *testing.T) {
	for _, counts := range [][]int{{1, 2}, {1, 2, 4}} {
		t.Run(fmt.Sprint(counts), func(t *testing.T) {
			calls := 0
			drifting := func(_ int, size int64, _ int) (float64, error) {
				calls++
				return float64(size) * math.Pow(1.02, float64(calls)), nil
			}
			g := NewGrid(4096, []int64{1 << 20}, counts)
			for r := range 3 { // odd: reversing alone would cancel in the median of an even count
				if err := pairedRound(drifting, g, 0, r%2 == 1); err != nil {
					t.Fatal(err)
				}
			}
			for j := 1; j < len(counts); j++ {
				if r := g.Ratio(0, 0, j); math.Abs(r-1) > 0.003 {
					t.Errorf("median paired ratio of %d workers to 1: %.4f, want 1", counts[j], r)
				}
			}
		})
	}
}
