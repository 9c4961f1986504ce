package fedavg

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestMedianAndTrimmedMean(t *testing.T) {
	ups := [][]float32{{1, 10}, {2, 20}, {3, 30}, {100, -1000}, {4, 40}}
	dst := make([]float32, 2)
	for _, workers := range []int{1, 2} {
		a := newAgg(t, Config{Workers: workers})
		if err := a.Median(dst, ups); err != nil {
			t.Fatal(err)
		}
		if dst[0] != 3 || dst[1] != 20 {
			t.Errorf("median = %v, want [3 20]", dst)
		}
		if err := a.Median(dst, ups[:4]); err != nil {
			t.Fatal(err)
		}
		if dst[0] != 2.5 || dst[1] != 15 {
			t.Errorf("even median = %v, want [2.5 15]", dst)
		}
		if err := a.TrimmedMean(dst, ups, 1); err != nil {
			t.Fatal(err)
		}
		if dst[0] != 3 || dst[1] != 20 {
			t.Errorf("trimmed mean = %v, want [3 20]", dst)
		}
		if err := a.TrimmedMean(dst, ups, 0); err != nil {
			t.Fatal(err)
		}
		if dst[0] != 22 || dst[1] != -180 {
			t.Errorf("untrimmed mean = %v, want [22 -180]", dst)
		}
	}
}

func TestColumnwiseMatchesSortReference(t *testing.T) {
	ups, _ := randomUpdates(31, 700, 4)
	med, trim := make([]float32, 700), make([]float32, 700)
	a := newAgg(t, Config{Workers: 3})
	if err := a.Median(med, ups); err != nil {
		t.Fatal(err)
	}
	if err := a.TrimmedMean(trim, ups, 5); err != nil {
		t.Fatal(err)
	}
	col := make([]float64, 31)
	for j := range 700 {
		for c := range ups {
			col[c] = float64(ups[c][j])
		}
		slices.Sort(col)
		if med[j] != float32(col[15]) {
			t.Fatalf("median %d = %v, want %v", j, med[j], col[15])
		}
		s := 0.0
		for _, v := range col[5:26] {
			s += v
		}
		if want := s / 21; math.Abs(float64(trim[j])-want) > 1e-6*math.Abs(want)+1e-30 {
			t.Fatalf("trimmed mean %d = %v, want %v", j, trim[j], want)
		}
	}
}

func TestColumnwiseBadInput(t *testing.T) {
	a := newAgg(t, Config{})
	dst := make([]float32, 2)
	ups := [][]float32{{1, 2}, {1, float32(math.Inf(1))}, {1, 2}}
	if err := a.Median(dst, ups); !errors.Is(err, ErrNonFinite) {
		t.Errorf("median with Inf: %v", err)
	}
	for _, trim := range []int{-1, 2, 5} {
		if err := a.TrimmedMean(dst, ups[:1], trim); !errors.Is(err, ErrParam) {
			t.Errorf("trim %d of 1 client: %v", trim, err)
		}
	}
	if err := a.Median(dst, nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("median of nothing: %v", err)
	}
}

// byzantine returns n-f honest updates near (1,1,…) and f far outliers.
func byzantine(n, f, dim int) [][]float32 {
	ups := make([][]float32, n)
	for i := range ups {
		ups[i] = make([]float32, dim)
		for j := range ups[i] {
			ups[i][j] = 1 + float32((i*7+j)%11-5)*1e-4
			if i >= n-f {
				ups[i][j] = 1e30 * float32(i%2*2-1)
			}
		}
	}
	return ups
}

func TestMultiKrumDropsOutliers(t *testing.T) {
	const n, f, dim = 12, 3, 257
	ups := byzantine(n, f, dim)
	ups[0][0] = math.MaxFloat32 // finite extremes must not poison distances
	dst := make([]float32, dim)
	for _, workers := range []int{1, 2, 5} {
		sel, err := newAgg(t, Config{Workers: workers}).MultiKrum(dst, ups, nil, f, n-f-1)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range sel {
			if c == 0 || c >= n-f {
				t.Fatalf("workers=%d selected client %d (outlier): %v", workers, c, sel)
			}
		}
		for j, v := range dst {
			if math.Abs(float64(v)-1) > 0.01 {
				t.Fatalf("coordinate %d = %v, want about 1", j, v)
			}
		}
	}
}

func TestMultiKrumBadInput(t *testing.T) {
	a := newAgg(t, Config{})
	ups := byzantine(6, 1, 4)
	dst := make([]float32, 4)
	tests := []struct {
		name string
		ups  [][]float32
		w    []float64
		f, m int
		want error
	}{
		{"f too large", ups, nil, 2, 1, ErrParam},
		{"negative f", ups, nil, -1, 1, ErrParam},
		{"m zero", ups, nil, 1, 0, ErrParam},
		{"m beyond n-f", ups, nil, 1, 6, ErrParam},
		{"bad weight", ups, []float64{1, 1, 1, 0, 1, 1}, 1, 2, ErrWeight},
		{"NaN update", append(ups[:5:5], []float32{0, float32(math.NaN()), 0, 0}), nil, 1, 2, ErrNonFinite},
		{"ragged", append(ups[:5:5], []float32{0}), nil, 1, 2, ErrLength},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := a.MultiKrum(dst, tc.ups, tc.w, tc.f, tc.m); !errors.Is(err, tc.want) {
				t.Errorf("error = %v, want %v", err, tc.want)
			}
		})
	}
}
