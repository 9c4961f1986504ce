//go:build !purego

package fedavg

import "golang.org/x/sys/cpu"

// CPU features, fixed at start-up (CPU and OS support).
var (
	hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512  = hasAVX2FMA && cpu.X86.HasAVX512F
)

// Kernel names the accumulation kernel this process uses: avx512, avx2
// or portable.
func Kernel() string {
	switch {
	case hasAVX512:
		return "avx512"
	case hasAVX2FMA:
		return "avx2"
	}
	return "portable"
}

//go:noescape
func roundAVX512(dst *float32, src *float64, n int) (nonFinite bool)

// round writes float32(src[j]) into dst[j] (len(dst) = len(src)) and
// returns the first j with a non-finite dst[j], or -1: 16 coordinates per
// instruction with AVX-512, the portable loop elsewhere and for the last
// len%16 (the same correctly rounded conversion either way).
func round(dst []float32, src []float64) int {
	v := 0
	if hasAVX512 {
		v = len(src) &^ 15
		if v > 0 && roundAVX512(&dst[0], &src[0], v) {
			bad := roundGo(dst[:v], src[:v]) // find it
			roundGo(dst[v:], src[v:])
			return bad
		}
	}
	if bad := roundGo(dst[v:], src[v:]); bad >= 0 {
		return v + bad
	}
	return -1
}

//go:noescape
func add8AVX2(acc *float64, u *[8]*float32, w *[8]float32, n int)

//go:noescape
func add8AVX512(acc *float64, u *[8]*float32, w *[8]float32, n int)

// add8 adds eight weighted clients into acc: 16 coordinates per
// instruction with AVX-512, 8 with AVX2+FMA, then the portable loop for
// the last len%8. The AVX-512 and AVX2 kernels give identical bits; the
// portable loop rounds each product (no FMA), so it may differ in the last
// bit, within the same error bound. Which coordinates take the portable
// loop depends only on dim (tiles start at multiples of 16), never on the
// worker count.
func add8(acc []float64, u0, u1, u2, u3, u4, u5, u6, u7 []float32, w *[8]float32) {
	n := len(acc)
	u0, u1, u2, u3 = u0[:n], u1[:n], u2[:n], u3[:n]
	u4, u5, u6, u7 = u4[:n], u5[:n], u6[:n], u7[:n]
	if !hasAVX2FMA || n < 8 {
		add8Go(acc, u0, u1, u2, u3, u4, u5, u6, u7, w)
		return
	}
	p := [8]*float32{&u0[0], &u1[0], &u2[0], &u3[0], &u4[0], &u5[0], &u6[0], &u7[0]}
	v := 0
	if hasAVX512 && n >= 16 {
		v = n &^ 15
		add8AVX512(&acc[0], &p, w, v)
	}
	if r := (n - v) &^ 7; r > 0 {
		q := [8]*float32{&u0[v], &u1[v], &u2[v], &u3[v], &u4[v], &u5[v], &u6[v], &u7[v]}
		add8AVX2(&acc[v], &q, w, r)
		v += r
	}
	if v < n {
		add8Go(acc[v:], u0[v:], u1[v:], u2[v:], u3[v:], u4[v:], u5[v:], u6[v:], u7[v:], w)
	}
}
