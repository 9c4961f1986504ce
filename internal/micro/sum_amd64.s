//go:build !purego

#include "textflag.h"

// func sumAVX2(p *float32, n int) float32
//
// Sums n float32 (n a multiple of 32) with four 8-lane accumulators, so
// the loop issues 32 loads per iteration and is bounded by memory (or L1)
// bandwidth, not by the latency of the additions.
TEXT ·sumAVX2(SB), NOSPLIT, $0-20
	MOVQ   p+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   BX, BX
	CMPQ   BX, CX
	JGE    reduce

loop:
	VADDPS (SI)(BX*4), Y0, Y0
	VADDPS 32(SI)(BX*4), Y1, Y1
	VADDPS 64(SI)(BX*4), Y2, Y2
	VADDPS 96(SI)(BX*4), Y3, Y3
	ADDQ   $32, BX
	CMPQ   BX, CX
	JLT    loop

reduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+16(FP)
	RET

// func sumAVX512(p *float32, n int) float32
//
// sumAVX2 with 16-lane accumulators (n a multiple of 64).
TEXT ·sumAVX512(SB), NOSPLIT, $0-20
	MOVQ   p+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	XORQ   BX, BX
	CMPQ   BX, CX
	JGE    reduce512

loop512:
	VADDPS (SI)(BX*4), Z0, Z0
	VADDPS 64(SI)(BX*4), Z1, Z1
	VADDPS 128(SI)(BX*4), Z2, Z2
	VADDPS 192(SI)(BX*4), Z3, Z3
	ADDQ   $64, BX
	CMPQ   BX, CX
	JLT    loop512

reduce512:
	VADDPS        Z1, Z0, Z0
	VADDPS        Z3, Z2, Z2
	VADDPS        Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VHADDPS       X0, X0, X0
	VHADDPS       X0, X0, X0
	VZEROUPPER
	MOVSS         X0, ret+16(FP)
	RET
