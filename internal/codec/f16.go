package codec

import (
	"encoding/binary"
	"math"
)

// F16Bits converts f to IEEE 754 binary16 bits, rounding to nearest with
// ties to even. Magnitudes that round to 65520 or more become ±Inf, results
// below the normal range are correctly rounded subnormals (or ±0), and a
// NaN stays NaN: quiet, with the sign and the top ten payload bits kept
// (the conversion github.com/x448/float16 performs).
func F16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	a := b & 0x7fffffff
	switch {
	case a >= 0x47800000: // |f| >= 65536, Inf or NaN
		if a > 0x7f800000 {
			return sign | 0x7e00 | uint16(a>>13)&0x3ff
		}
		return sign | 0x7c00
	case a < 0x38800000: // |f| < 2^-14: half subnormal or zero
		// Adding 0.5 aligns the half's subnormal bits at the bottom of
		// the float32 mantissa; the FPU rounds them to nearest even.
		return sign | uint16(math.Float32bits(math.Float32frombits(a)+0.5)-0x3f000000)
	default:
		// Rebias the exponent (127 → 15) and round the 13 dropped
		// mantissa bits to nearest even; a carry may reach Inf.
		a += 0xc8000fff + (a>>13)&1
		return sign | uint16(a>>13)
	}
}

// F16Float converts IEEE 754 binary16 bits to float32 exactly.
func F16Float(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	em := uint32(h & 0x7fff)
	switch {
	case em >= 0x7c00: // Inf or NaN, payload kept
		return math.Float32frombits(sign | 0x7f800000 | (em&0x3ff)<<13)
	case em >= 0x0400: // normal
		return math.Float32frombits(sign | (em<<13 + 112<<23))
	default: // subnormal or zero: em · 2^-24, exact in float32
		return math.Float32frombits(sign | math.Float32bits(float32(em)*0x1p-24))
	}
}

// AppendF16 appends an F16 frame of v to dst. It never fails: values too
// large become ±Inf and NaN stays NaN.
func AppendF16(dst []byte, v []float32) []byte {
	dst = appendHeader(dst, F16, len(v))
	off := len(dst)
	dst = append(dst, make([]byte, 2*len(v))...)
	out := dst[off : off+2*len(v)]
	for i, x := range v {
		binary.LittleEndian.PutUint16(out[2*i:], F16Bits(x))
	}
	return dst
}

// DecodeF16 decodes an F16 frame into dst (reusing its capacity).
func DecodeF16(dst []float32, p []byte) ([]float32, error) {
	h, err := parseHeader(p, F16)
	if err != nil {
		return nil, err
	}
	return decodeF16(dst, h), nil
}

func decodeF16(dst []float32, h header) []float32 {
	dst = grow(dst, h.count)
	b := h.body[:len(dst)*2]
	for i := range dst {
		dst[i] = F16Float(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return dst
}
