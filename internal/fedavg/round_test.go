package fedavg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRoundMatchesConversion checks round (AVX-512 where present) against
// Go's float32 conversion bit for bit, and the first non-finite index it
// reports, for lengths around the vector width and for special values:
// float32 overflow, halfway cases, subnormals, ±0, ±Inf, NaN.
func TestRoundMatchesConversion(t *testing.T) {
	specials := []float64{0, math.Copysign(0, -1), 1e39, -1e39, math.MaxFloat32,
		float64(math.MaxFloat32) * (1 + 0x1p-25), 1 + 0x1p-24, 1 + 3*0x1p-24, 0x1p-149, 0x1p-151, 3 * 0x1p-151, 1e-320}
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 15, 16, 17, 31, 32, 100, 4096} {
		src := make([]float64, n)
		for j := range src {
			src[j] = r.NormFloat64() * math.Pow(2, float64(r.IntN(300)-150))
			if r.IntN(4) == 0 {
				src[j] = specials[r.IntN(len(specials))]
			}
		}
		for _, tc := range []struct {
			name string
			at   int // -1: leave as is
			v    float64
		}{{"finite", -1, 0}, {"NaN first", 0, math.NaN()}, {"Inf last", n - 1, math.Inf(-1)}, {"NaN middle", n / 2, math.NaN()},
			{"float32 overflow middle", n / 2, 1e39}, {"rounds up to overflow last", n - 1, -float64(math.MaxFloat32) * (1 + 0x1p-24)}} {
			s := append([]float64(nil), src...)
			for j := range s {
				if f := float32(s[j]); f-f != 0 {
					s[j] = 1 // only the planted value is non-finite
				}
			}
			if tc.at >= 0 {
				s[tc.at] = tc.v
			}
			got := make([]float32, n)
			bad := round(got, s)
			want := -1
			for j, v := range s {
				f := float32(v)
				if math.Float32bits(got[j]) != math.Float32bits(f) && !(f != f && got[j] != got[j]) {
					t.Fatalf("n=%d %s: dst[%d] = %v (%#x), float32(%v) = %v", n, tc.name, j, got[j], math.Float32bits(got[j]), v, f)
				}
				if f-f != 0 && want < 0 {
					want = j
				}
			}
			if bad != want {
				t.Fatalf("n=%d %s: first non-finite %d, want %d", n, tc.name, bad, want)
			}
		}
	}
}
