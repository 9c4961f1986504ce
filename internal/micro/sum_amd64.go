//go:build !purego

package micro

import "golang.org/x/sys/cpu"

// CPU features, fixed at start-up (CPU and OS support).
var (
	hasAVX2   = cpu.X86.HasAVX2
	hasAVX512 = cpu.X86.HasAVX2 && cpu.X86.HasAVX512F
)

//go:noescape
func sumAVX2(p *float32, n int) float32

//go:noescape
func sumAVX512(p *float32, n int) float32

// sumFloor sums v as fast as this machine reads memory: the widest vector
// unit FedAvg also uses (AVX-512 or AVX2) with four accumulators for the
// bulk, the portable loop for the tail.
func sumFloor(v []float32) float32 {
	if hasAVX512 {
		if n := len(v) &^ 63; n > 0 {
			return sumAVX512(&v[0], n) + sum8(v[n:])
		}
	}
	n := len(v) &^ 31
	if !hasAVX2 || n == 0 {
		return sum8(v)
	}
	return sumAVX2(&v[0], n) + sum8(v[n:])
}
