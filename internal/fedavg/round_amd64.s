//go:build !purego

#include "textflag.h"

// func roundAVX512(dst *float32, src *float64, n int) (nonFinite bool)
//
// For j in [0, n) (n a multiple of 16): dst[j] = float32(src[j]) (round
// to nearest even, as Go's conversion), and whether any dst[j] is NaN or
// ±Inf: f−f is ±0 for finite f and NaN otherwise; the OR of those bit
// patterns is NaN iff one of them is.
TEXT ·roundAVX512(SB), NOSPLIT, $0-25
	MOVQ   dst+0(FP), DI
	MOVQ   src+8(FP), SI
	MOVQ   n+16(FP), CX
	VXORPS Z3, Z3, Z3
	XORQ   BX, BX
	CMPQ   BX, CX
	JGE    done

loop:
	VCVTPD2PS     (SI)(BX*8), Y0
	VCVTPD2PS     64(SI)(BX*8), Y1
	VINSERTF64X4  $1, Y1, Z0, Z0
	VMOVUPS       Z0, (DI)(BX*4)
	VSUBPS        Z0, Z0, Z2
	VORPS         Z2, Z3, Z3
	ADDQ          $16, BX
	CMPQ          BX, CX
	JLT           loop

done:
	VCMPPS   $3, Z3, Z3, K1
	KORTESTW K1, K1
	SETNE    nonFinite+24(FP)
	VZEROUPPER
	RET
