package codec

import (
	"encoding/binary"
	"fmt"
	"math"
)

// AppendI8 appends an I8 frame of v to dst: scale is max|v|/127 rounded
// to a float32 with 127·scale <= max|v|, and each value becomes
// round(v/scale) (half away from zero), clamped to [-127, 127]. The decoded
// value is within scale/2 + 2⁻²⁴|v| of v, and within 127·2⁻¹⁴⁹ when
// max|v| is so small (< 1.5e-36) that scale is subnormal. A NaN or ±Inf in
// v is an ErrNonFinite error and dst is returned unchanged.
func AppendI8(dst []byte, v []float32) ([]byte, error) {
	maxAbs, err := maxAbsFinite(v)
	if err != nil {
		return dst, err
	}
	var scale float32
	var inv float64
	if maxAbs > 0 {
		scale = float32(float64(maxAbs) / 127)
		if float64(scale)*127 > float64(maxAbs) {
			scale = math.Nextafter32(scale, 0) // so 127·scale cannot overflow
		}
	}
	if scale > 0 { // else every value quantizes to 0 (max|v| < 64·2⁻¹⁴⁹ underflows the scale)
		inv = 1 / float64(scale)
	}
	dst = appendHeader(dst, I8, len(v))
	dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(scale))
	off := len(dst)
	dst = append(dst, make([]byte, len(v))...)
	out := dst[off : off+len(v)]
	for i, x := range v {
		out[i] = byte(quantize(x, inv))
	}
	return dst, nil
}

// maxAbsFinite returns max|v|, or ErrNonFinite for the first NaN or ±Inf.
// For finite floats the order of |x| is the order of their bits without
// the sign, so the loop is integer max (branch-free) over the bits.
func maxAbsFinite(v []float32) (float32, error) {
	var m uint32
	for _, x := range v {
		m = max(m, math.Float32bits(x)&0x7fffffff)
	}
	if m >= 0x7f800000 {
		for i, x := range v {
			if x-x != 0 {
				return 0, fmt.Errorf("%w: value %v at index %d in int8 payload", ErrNonFinite, x, i)
			}
		}
	}
	return math.Float32frombits(m), nil
}

// quantize rounds x·inv half away from zero and clamps to ±127. |x·inv|
// is at most 127 plus rounding, so the conversion to int32 is exact and
// the clamp only trims that rounding; no branch depends on the data.
func quantize(x float32, inv float64) int8 {
	q := float64(x) * inv
	r := int32(q + math.Copysign(0.5, q))
	return int8(min(max(r, -127), 127))
}

// DecodeI8 decodes an I8 frame into dst (reusing its capacity). A value of
// -128, which the encoder never writes, is an ErrCorrupt error.
func DecodeI8(dst []float32, p []byte) ([]float32, error) {
	h, err := parseHeader(p, I8)
	if err != nil {
		return nil, err
	}
	return decodeI8(dst, h)
}

func decodeI8(dst []float32, h header) ([]float32, error) {
	dst = grow(dst, h.count)
	b := h.body[:len(dst)]
	for i, q := range b {
		if q == 0x80 {
			return nil, fmt.Errorf("%w: int8 value -128 at index %d (valid range is ±127)", ErrCorrupt, i)
		}
		dst[i] = float32(float64(int8(q)) * float64(h.scale))
	}
	return dst, nil
}
