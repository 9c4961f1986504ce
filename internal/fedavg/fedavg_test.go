package fedavg

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

func randomUpdates(clients, dim int, seed uint64) ([][]float32, []float64) {
	r := rand.New(rand.NewPCG(seed, 3))
	ups := make([][]float32, clients)
	for i := range ups {
		ups[i] = make([]float32, dim)
		for j := range ups[i] {
			ups[i][j] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
		}
	}
	w := make([]float64, clients)
	for i := range w {
		w[i] = float64(1 + r.IntN(5000))
	}
	return ups, w
}

// reference is the weighted mean in float64 and Σ wᵢ|uᵢ| per coordinate.
func reference(ups [][]float32, w []float64) (mean, mag []float64) {
	dim := len(ups[0])
	mean, mag = make([]float64, dim), make([]float64, dim)
	total := 0.0
	for _, x := range w {
		total += x
	}
	for c, u := range ups {
		for j, v := range u {
			mean[j] += w[c] / total * float64(v)
			mag[j] += w[c] / total * math.Abs(float64(v))
		}
	}
	return mean, mag
}

func newAgg(t testing.TB, cfg Config) *Aggregator {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func TestFedAvgMatchesFloat64Reference(t *testing.T) {
	for _, clients := range []int{1, 2, 3, 8, 9, 17, 64} {
		for _, dim := range []int{1, 15, 16, 1000, 4099} {
			for _, workers := range []int{1, 2, 3, 8, Auto} {
				t.Run(fmt.Sprintf("clients=%d/dim=%d/workers=%d", clients, dim, workers), func(t *testing.T) {
					ups, w := randomUpdates(clients, dim, uint64(clients*dim))
					dst := make([]float32, dim)
					if err := newAgg(t, Config{Workers: workers}).FedAvg(dst, ups, w); err != nil {
						t.Fatal(err)
					}
					mean, mag := reference(ups, w)
					for j := range dst {
						bound := 10*0x1p-24*mag[j] + 0x1p-24*math.Abs(mean[j])
						if d := math.Abs(float64(dst[j]) - mean[j]); d > bound {
							t.Fatalf("coordinate %d = %v, reference %v: error %g > bound %g", j, dst[j], mean[j], d, bound)
						}
					}
				})
			}
		}
	}
}

func TestFedAvgIsIdenticalForEveryWorkerCount(t *testing.T) {
	for _, clip := range []float64{0, 0.01} { // 0.01 is below the mean's norm: it clips
		t.Run(fmt.Sprintf("clip=%v", clip), func(t *testing.T) {
			ups, w := randomUpdates(37, 3001, 9)
			want := make([]float32, 3001)
			if err := newAgg(t, Config{Workers: 1, ClipNorm: clip}).FedAvg(want, ups, w); err != nil {
				t.Fatal(err)
			}
			if n := math.Sqrt(sumSquares(want)); clip > 0 && math.Abs(n-clip) > 1e-6 {
				t.Fatalf("norm %v after clipping to %v", n, clip)
			}
			for _, workers := range []int{2, 3, 4, 7, 37} {
				got := make([]float32, 3001)
				if err := newAgg(t, Config{Workers: workers, ClipNorm: clip}).FedAvg(got, ups, w); err != nil {
					t.Fatal(err)
				}
				for j := range got {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("workers=%d: coordinate %d = %v, one worker gives %v", workers, j, got[j], want[j])
					}
				}
			}
		})
	}
}

func TestFedAvgNilWeightsIsThePlainMean(t *testing.T) {
	ups := [][]float32{{1, 2, 3}, {3, 4, 5}}
	dst := make([]float32, 3)
	if err := newAgg(t, Config{}).FedAvg(dst, ups, nil); err != nil {
		t.Fatal(err)
	}
	if dst[0] != 2 || dst[1] != 3 || dst[2] != 4 {
		t.Errorf("mean = %v, want [2 3 4]", dst)
	}
	if err := newAgg(t, Config{}).FedAvg(dst, ups, []float64{1, 3}); err != nil {
		t.Fatal(err)
	}
	if dst[0] != 2.5 || dst[1] != 3.5 || dst[2] != 4.5 {
		t.Errorf("weighted mean = %v, want [2.5 3.5 4.5]", dst)
	}
}

func TestFedAvgSteadyStateDoesNotAllocate(t *testing.T) {
	ups, w := randomUpdates(16, 4096, 1)
	dst := make([]float32, 4096)
	for _, workers := range []int{1, 4} {
		a := newAgg(t, Config{Workers: workers, ClipNorm: 1})
		if err := a.FedAvg(dst, ups, w); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(20, func() { _ = a.FedAvg(dst, ups, w) }); n != 0 {
			t.Errorf("workers=%d: %v allocations per call, want 0", workers, n)
		}
	}
}

func TestClipNorm(t *testing.T) {
	ups := [][]float32{{3, 4}, {3, 4}} // mean (3,4), norm 5
	for _, tc := range []struct {
		clip float64
		want [2]float32
	}{{0, [2]float32{3, 4}}, {10, [2]float32{3, 4}}, {1, [2]float32{0.6, 0.8}}} {
		dst := make([]float32, 2)
		if err := newAgg(t, Config{ClipNorm: tc.clip}).FedAvg(dst, ups, nil); err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(dst[0]-tc.want[0])) > 1e-6 || math.Abs(float64(dst[1]-tc.want[1])) > 1e-6 {
			t.Errorf("clip %v: got %v, want %v", tc.clip, dst, tc.want)
		}
	}
}

func TestFedAvgBadInput(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	tests := []struct {
		name          string
		ups           [][]float32
		w             []float64
		dim           int
		want          error
		client, index int
	}{
		{"no updates", nil, nil, 2, ErrEmpty, -1, -1},
		{"dimension zero", [][]float32{{}}, nil, 0, ErrEmpty, 0, -1},
		{"mismatched update", [][]float32{{1, 2}, {1}}, nil, 2, ErrLength, 1, -1},
		{"short dst", [][]float32{{1, 2}}, nil, 1, ErrLength, -1, -1},
		{"weights length", [][]float32{{1}, {2}}, []float64{1}, 1, ErrLength, -1, -1},
		{"zero weight", [][]float32{{1}, {2}}, []float64{1, 0}, 1, ErrWeight, 1, -1},
		{"negative weight", [][]float32{{1}, {2}}, []float64{-1, 1}, 1, ErrWeight, 0, -1},
		{"NaN weight", [][]float32{{1}, {2}}, []float64{1, math.NaN()}, 1, ErrWeight, 1, -1},
		{"Inf weight", [][]float32{{1}, {2}}, []float64{math.Inf(1), 1}, 1, ErrWeight, 0, -1},
		{"weights overflow", [][]float32{{1}, {2}}, []float64{math.MaxFloat64, math.MaxFloat64}, 1, ErrWeight, -1, -1},
		{"NaN in update", [][]float32{{1, 2, 3}, {1, nan, 3}}, nil, 3, ErrNonFinite, 1, 1},
		{"Inf in update", [][]float32{{1, 2, inf}, {1, 2, 3}}, nil, 3, ErrNonFinite, 0, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, workers := range []int{1, 2} {
				err := newAgg(t, Config{Workers: workers}).FedAvg(make([]float32, tc.dim), tc.ups, tc.w)
				var ie *InputError
				if !errors.Is(err, tc.want) || !errors.As(err, &ie) {
					t.Fatalf("error = %v, want %v as *InputError", err, tc.want)
				}
				if ie.Client != tc.client || ie.Index != tc.index {
					t.Errorf("error %q locates client %d index %d, want %d %d", err, ie.Client, ie.Index, tc.client, tc.index)
				}
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []Config{{Workers: -1}, {ClipNorm: -1}, {ClipNorm: math.NaN()}, {ClipNorm: math.Inf(1)}} {
		if _, err := New(cfg); !errors.Is(err, ErrParam) {
			t.Errorf("New(%+v) error = %v, want ErrParam", cfg, err)
		}
	}
}

func TestClosedAggregatorStillWorks(t *testing.T) {
	a := newAgg(t, Config{Workers: 4})
	a.Close()
	a.Close()
	dst := make([]float32, 1)
	if err := a.FedAvg(dst, [][]float32{{1}, {3}}, nil); err != nil || dst[0] != 2 {
		t.Errorf("after Close: %v, %v", dst, err)
	}
}

func TestResolveWorkers(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	tests := []struct {
		name                      string
		clients, dim, req, wanted int
	}{
		{"explicit", 128, 4096, 4, 4},
		{"explicit clamped to clients", 3, 4096, 8, 3},
		{"explicit one", 512, 8192, 1, 1},
		{"negative means auto", 1, 1, -3, 1},
		{"auto small is one", 32, 2048, Auto, 1},
		{"auto below threshold", 1, autoMinBytesPerWorker/4 - 1, Auto, 1},
		{"auto 16 MiB", 512, 8192, Auto, max(1, min(procs, 512*8192*4/autoMinBytesPerWorker))},
		{"auto 64 MiB uses the procs", 512, 32768, Auto, min(procs, 4)},
		{"auto never exceeds clients", 1, 1 << 26, Auto, 1},
		{"zero clients", 0, 10, Auto, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ResolveWorkers(tc.clients, tc.dim, tc.req); got != tc.wanted {
				t.Errorf("ResolveWorkers(%d, %d, %d) = %d, want %d", tc.clients, tc.dim, tc.req, got, tc.wanted)
			}
		})
	}
}

func TestAdd8KernelsMatchReference(t *testing.T) {
	ups, w := randomUpdates(8, 1000+7, 5)
	wn := make([]float32, 8)
	total := 0.0
	for _, x := range w {
		total += x
	}
	for i := range wn {
		wn[i] = float32(w[i] / total)
	}
	mean, mag := reference(ups, w)
	for name, kernel := range map[string]func([]float64, []float32, []float32, []float32, []float32, []float32, []float32, []float32, []float32, *[8]float32){
		"dispatch": add8, "portable": add8Go,
	} {
		for _, lo := range []int{0, 3, 16} { // unaligned starts and short tails
			acc := make([]float64, len(mean)-lo)
			u := make([][]float32, 8)
			for i := range u {
				u[i] = ups[i][lo:]
			}
			kernel(acc, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], (*[8]float32)(wn))
			for j, got := range acc {
				ref := mean[lo+j]
				if d := math.Abs(got - ref); d > 10*0x1p-24*mag[lo+j] {
					t.Fatalf("%s lo=%d: coordinate %d = %v, reference %v", name, lo, j, got, ref)
				}
			}
		}
	}
}
