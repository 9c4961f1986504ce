//go:build !purego

#include "textflag.h"

// func add8AVX2(acc *float64, u *[8]*float32, w *[8]float32, n int)
//
// For j in [0, n) (n a multiple of 8):
//   acc[j] += float64((w0·u0[j] + w1·u1[j] + w2·u2[j] + w3·u3[j]) +
//                     (w4·u4[j] + w5·u5[j] + w6·u6[j] + w7·u7[j]))
// with the two four-term chains formed by FMA in float32.
TEXT ·add8AVX2(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), AX
	MOVQ u+8(FP), BX
	MOVQ w+16(FP), DX
	MOVQ n+24(FP), CX

	MOVQ 0(BX), SI
	MOVQ 8(BX), DI
	MOVQ 16(BX), R8
	MOVQ 24(BX), R9
	MOVQ 32(BX), R10
	MOVQ 40(BX), R11
	MOVQ 48(BX), R12
	MOVQ 56(BX), R13

	VBROADCASTSS 0(DX), Y0
	VBROADCASTSS 4(DX), Y1
	VBROADCASTSS 8(DX), Y2
	VBROADCASTSS 12(DX), Y3
	VBROADCASTSS 16(DX), Y4
	VBROADCASTSS 20(DX), Y5
	VBROADCASTSS 24(DX), Y6
	VBROADCASTSS 28(DX), Y7

	XORQ BX, BX
	CMPQ BX, CX
	JGE  done

loop:
	VMULPS      (SI)(BX*4), Y0, Y8
	VFMADD231PS (DI)(BX*4), Y1, Y8
	VFMADD231PS (R8)(BX*4), Y2, Y8
	VFMADD231PS (R9)(BX*4), Y3, Y8
	VMULPS      (R10)(BX*4), Y4, Y9
	VFMADD231PS (R11)(BX*4), Y5, Y9
	VFMADD231PS (R12)(BX*4), Y6, Y9
	VFMADD231PS (R13)(BX*4), Y7, Y9
	VADDPS      Y9, Y8, Y8
	VCVTPS2PD   X8, Y10
	VEXTRACTF128 $1, Y8, X11
	VCVTPS2PD   X11, Y11
	VADDPD      (AX)(BX*8), Y10, Y10
	VADDPD      32(AX)(BX*8), Y11, Y11
	VMOVUPD     Y10, (AX)(BX*8)
	VMOVUPD     Y11, 32(AX)(BX*8)
	ADDQ        $8, BX
	CMPQ        BX, CX
	JLT         loop

done:
	VZEROUPPER
	RET

// func add8AVX512(acc *float64, u *[8]*float32, w *[8]float32, n int)
//
// add8AVX2 with 16 coordinates per iteration (n a multiple of 16), each
// of the eight client rows prefetched 512 bytes (8 lines) ahead. The eight
// rows are read at a stride of the dimension (a multiple of 4 KiB in the
// micro matrix), so they share one L1 set, and the hardware prefetchers
// keep fewer lines in flight than for one stream; the explicit prefetch
// took FedAvg from 1.25–1.44 to 1.15–1.19 times the memory floor at 16 MiB
// (one worker, minimum of interleaved trials, docs/micro.md), and made no
// difference at 8 MiB and below. Prefetches past the end of a row never
// fault.
TEXT ·add8AVX512(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), AX
	MOVQ u+8(FP), BX
	MOVQ w+16(FP), DX
	MOVQ n+24(FP), CX

	MOVQ 0(BX), SI
	MOVQ 8(BX), DI
	MOVQ 16(BX), R8
	MOVQ 24(BX), R9
	MOVQ 32(BX), R10
	MOVQ 40(BX), R11
	MOVQ 48(BX), R12
	MOVQ 56(BX), R13

	VBROADCASTSS 0(DX), Z0
	VBROADCASTSS 4(DX), Z1
	VBROADCASTSS 8(DX), Z2
	VBROADCASTSS 12(DX), Z3
	VBROADCASTSS 16(DX), Z4
	VBROADCASTSS 20(DX), Z5
	VBROADCASTSS 24(DX), Z6
	VBROADCASTSS 28(DX), Z7

	XORQ BX, BX
	CMPQ BX, CX
	JGE  done512

loop512:
	PREFETCHT0    512(SI)(BX*4)
	PREFETCHT0    512(DI)(BX*4)
	PREFETCHT0    512(R8)(BX*4)
	PREFETCHT0    512(R9)(BX*4)
	PREFETCHT0    512(R10)(BX*4)
	PREFETCHT0    512(R11)(BX*4)
	PREFETCHT0    512(R12)(BX*4)
	PREFETCHT0    512(R13)(BX*4)
	VMULPS        (SI)(BX*4), Z0, Z8
	VFMADD231PS   (DI)(BX*4), Z1, Z8
	VFMADD231PS   (R8)(BX*4), Z2, Z8
	VFMADD231PS   (R9)(BX*4), Z3, Z8
	VMULPS        (R10)(BX*4), Z4, Z9
	VFMADD231PS   (R11)(BX*4), Z5, Z9
	VFMADD231PS   (R12)(BX*4), Z6, Z9
	VFMADD231PS   (R13)(BX*4), Z7, Z9
	VADDPS        Z9, Z8, Z8
	VCVTPS2PD     Y8, Z10
	VEXTRACTF64X4 $1, Z8, Y11
	VCVTPS2PD     Y11, Z11
	VADDPD        (AX)(BX*8), Z10, Z10
	VADDPD        64(AX)(BX*8), Z11, Z11
	VMOVUPD       Z10, (AX)(BX*8)
	VMOVUPD       Z11, 64(AX)(BX*8)
	ADDQ          $16, BX
	CMPQ          BX, CX
	JLT           loop512

done512:
	VZEROUPPER
	RET

