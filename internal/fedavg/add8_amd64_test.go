//go:build !purego

package fedavg

import (
	"math"
	"testing"
)

// TestAdd8SIMDKernelsAgree checks the AVX-512 kernel against the AVX2 one
// bit for bit; the AVX2 kernel is checked against the float64 reference by
// TestAdd8KernelsMatchReference (through add8) on machines without AVX-512.
func TestAdd8SIMDKernelsAgree(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512 on this machine")
	}
	ups, w := randomUpdates(8, 4096, 8)
	wn := [8]float32{}
	for i := range wn {
		wn[i] = float32(w[i] / 20000)
	}
	p := [8]*float32{}
	for i := range p {
		p[i] = &ups[i][0]
	}
	a, b := make([]float64, 4096), make([]float64, 4096)
	add8AVX2(&a[0], &p, &wn, 4096)
	add8AVX512(&b[0], &p, &wn, 4096)
	for j := range a {
		if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
			t.Fatalf("coordinate %d: AVX2 %v, AVX-512 %v", j, a[j], b[j])
		}
	}
	mean, mag := reference(ups, w)
	scale := 0.0
	for _, x := range w {
		scale += x
	}
	for j := range a {
		want := mean[j] * scale / 20000 // the kernel saw weights w/20000
		if d := math.Abs(a[j] - want); d > 10*0x1p-24*mag[j]*scale/20000 {
			t.Fatalf("coordinate %d = %v, reference %v", j, a[j], want)
		}
	}
}
