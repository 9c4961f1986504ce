//go:build !amd64 || purego

package fedavg

func add8(acc []float64, u0, u1, u2, u3, u4, u5, u6, u7 []float32, w *[8]float32) {
	add8Go(acc, u0, u1, u2, u3, u4, u5, u6, u7, w)
}

// round writes float32(src[j]) into dst[j] and returns the first j with
// a non-finite dst[j], or -1.
func round(dst []float32, src []float64) int { return roundGo(dst, src) }

// Kernel names the accumulation kernel this process uses: avx512, avx2
// or portable.
func Kernel() string { return "portable" }
