package fedavg

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactPrec makes every sum below exact: float32 values span 2⁻¹⁴⁹…2¹²⁸,
// the weights are integers below 2¹⁶, so a sum of up to 2¹⁶ products
// needs fewer than 24+16+277+16 bits; only the final division rounds.
const exactPrec = 512

// exactMean is Σ wᵢuᵢ[j] / Σ wᵢ for coordinate j, correctly rounded to
// exactPrec bits (math/big), as a float64 (the rounding to float64 adds at
// most 2⁻⁵³ relative, far below the bounds checked).
func exactMean(ups [][]float32, w []float64, j int) float64 {
	num, den := new(big.Float).SetPrec(exactPrec), new(big.Float).SetPrec(exactPrec)
	term := new(big.Float).SetPrec(exactPrec)
	wf := new(big.Float).SetPrec(exactPrec)
	for c, u := range ups {
		wf.SetFloat64(w[c])
		term.SetFloat64(float64(u[j]))
		term.Mul(term, wf)
		num.Add(num, term)
		den.Add(den, wf)
	}
	f, _ := num.Quo(num, den).Float64()
	return f
}

// adversarial input generators: each returns a client's value at a
// coordinate.
var adversarial = []struct {
	name string
	gen  func(r *rand.Rand, c, j int) float32
}{
	{"mixed magnitudes 1e-3..1e3", func(r *rand.Rand, _, _ int) float32 {
		return float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
	}},
	{"magnitudes 1e-30..1e30", func(r *rand.Rand, _, _ int) float32 {
		return float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(61)-30)))
	}},
	{"cancellation: ±1e6 pairs plus small residuals", func(r *rand.Rand, c, j int) float32 {
		big := float32(1e6 * (1 + float64((c/2+j)%97)))
		if c%2 == 1 {
			big = -big
		}
		return big + float32(r.NormFloat64())
	}},
	{"cancellation: one huge value among tiny ones", func(r *rand.Rand, c, _ int) float32 {
		if c == 0 {
			return 3e30
		}
		if c == 1 {
			return -3e30
		}
		return float32(r.NormFloat64() * 1e-6)
	}},
	{"near overflow, same sign", func(r *rand.Rand, _, _ int) float32 {
		return float32(1e38 * (0.5 + 0.5*r.Float64()))
	}},
	{"subnormal range", func(r *rand.Rand, _, _ int) float32 {
		return float32(r.NormFloat64() * 1e-38)
	}},
	{"exact integers that cancel to zero", func(_ *rand.Rand, c, j int) float32 {
		return float32((c%2)*2-1) * float32(1+(j%5))
	}},
}

// TestFedAvgErrorBoundAgainstExactSums checks the documented error bound
// of FedAvg against exact sums (math/big) over random and adversarial
// inputs, with random and equal weights and several worker counts:
//
//	|dst[j] − exact[j]| ≤ 10·2⁻²⁴·Σᵢ wᵢ|uᵢ[j]| + 2⁻²⁴·|exact[j]| + n·2⁻¹⁴⁶
//
// (wᵢ normalised; the last term covers underflow: each of the at most 16
// float32 roundings per client loses at most 2⁻¹⁵⁰ in the subnormal
// range). It logs the largest error seen in units of 2⁻²⁴·Σᵢ wᵢ|uᵢ[j]|.
func TestFedAvgErrorBoundAgainstExactSums(t *testing.T) {
	worst := 0.0
	for _, tc := range adversarial {
		for _, clients := range []int{1, 7, 8, 9, 16, 17, 24, 64, 131} {
			for _, equal := range []bool{false, true} {
				name := fmt.Sprintf("%s/clients=%d/equal=%v", tc.name, clients, equal)
				t.Run(name, func(t *testing.T) {
					worst = max(worst, checkExact(t, tc.gen, clients, 67, equal))
				})
			}
		}
	}
	t.Logf("largest error: %.3f × 2⁻²⁴·Σ wᵢ|uᵢ| (bound 10, plus 2⁻²⁴|mean|)", worst)
}

func checkExact(t *testing.T, gen func(*rand.Rand, int, int) float32, clients, dim int, equal bool) float64 {
	r := rand.New(rand.NewPCG(uint64(clients), uint64(dim)))
	ups := make([][]float32, clients)
	for c := range ups {
		ups[c] = make([]float32, dim)
		for j := range ups[c] {
			ups[c][j] = gen(r, c, j)
		}
	}
	var w []float64
	ws := make([]float64, clients)
	for c := range ws {
		ws[c] = 1
	}
	if !equal {
		for c := range ws {
			ws[c] = float64(1 + r.IntN(60000))
		}
		w = ws
	}
	total := 0.0
	for _, x := range ws {
		total += x
	}
	worst := 0.0
	for _, workers := range []int{1, 2, 3} {
		dst := make([]float32, dim)
		if err := newAgg(t, Config{Workers: workers}).FedAvg(dst, ups, w); err != nil {
			t.Fatal(err)
		}
		for j := range dst {
			exact, mag := exactMean(ups, ws, j), 0.0
			for c := range ups {
				mag += ws[c] / total * math.Abs(float64(ups[c][j]))
			}
			mag *= 1 + 0x1p-40 // mag itself is summed in float64
			d := math.Abs(float64(dst[j]) - exact)
			bound := 10*0x1p-24*mag + 0x1p-24*math.Abs(exact) + float64(clients)*0x1p-146
			if d > bound {
				t.Fatalf("workers=%d: coordinate %d = %v, exact %v: error %g > bound %g", workers, j, dst[j], exact, d, bound)
			}
			if mag > 0x1p-100 {
				worst = max(worst, max(0, d-0x1p-24*math.Abs(exact))/(0x1p-24*mag))
			}
		}
	}
	return worst
}
