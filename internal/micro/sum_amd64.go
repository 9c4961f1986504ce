package micro

import "golang.org/x/sys/cpu"

// hasAVX2 is fixed at start-up (CPU and OS support for AVX2).
var hasAVX2 = cpu.X86.HasAVX2

//go:noescape
func sumAVX2(p *float32, n int) float32

// sumFloor sums v as fast as this machine reads memory: AVX2 with four
// accumulators for the bulk, the portable loop for the tail.
func sumFloor(v []float32) float32 {
	n := len(v) &^ 31
	if !hasAVX2 || n == 0 {
		return sum8(v)
	}
	return sumAVX2(&v[0], n) + sum8(v[n:])
}
