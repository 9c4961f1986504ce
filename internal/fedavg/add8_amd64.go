package fedavg

import "golang.org/x/sys/cpu"

// hasAVX2FMA is fixed at start-up (CPU and OS support for AVX2 and FMA).
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func add8AVX2(acc *float64, u *[8]*float32, w *[8]float32, n int)

// add8 adds eight weighted clients into acc: with AVX2 and FMA eight
// coordinates per instruction for the length rounded down to a multiple of
// 8, then the portable loop for the rest.
func add8(acc []float64, u0, u1, u2, u3, u4, u5, u6, u7 []float32, w *[8]float32) {
	n := len(acc)
	u0, u1, u2, u3 = u0[:n], u1[:n], u2[:n], u3[:n]
	u4, u5, u6, u7 = u4[:n], u5[:n], u6[:n], u7[:n]
	v := n &^ 7
	if hasAVX2FMA && v > 0 {
		p := [8]*float32{&u0[0], &u1[0], &u2[0], &u3[0], &u4[0], &u5[0], &u6[0], &u7[0]}
		add8AVX2(&acc[0], &p, w, v)
		if v == n {
			return
		}
		acc = acc[v:]
		u0, u1, u2, u3 = u0[v:], u1[v:], u2[v:], u3[v:]
		u4, u5, u6, u7 = u4[v:], u5[v:], u6[v:], u7[v:]
	}
	add8Go(acc, u0, u1, u2, u3, u4, u5, u6, u7, w)
}
