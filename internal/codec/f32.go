package codec

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// hostLittleEndian is fixed at start-up and never written again.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// AppendF32 appends an F32 frame of v to dst. On little-endian hosts the
// values are copied with one memmove; with enough capacity in dst it does
// not allocate.
func AppendF32(dst []byte, v []float32) []byte {
	dst = appendHeader(dst, F32, len(v))
	if hostLittleEndian {
		return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*4)...)
	}
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return dst
}

// ViewF32 returns the values of an F32 frame. On a little-endian host with
// the values 4-byte aligned (the frame itself 4-byte aligned, as every Go
// allocation of 8 bytes or more is) the result aliases p: no copy, no
// allocation, and p must stay unmodified while the result is in use.
// Otherwise it returns a copy. NaN and ±Inf pass through as they are.
func ViewF32(p []byte) ([]float32, error) {
	h, err := parseHeader(p, F32)
	if err != nil {
		return nil, err
	}
	if h.count == 0 {
		return []float32{}, nil
	}
	if hostLittleEndian && uintptr(unsafe.Pointer(&h.body[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&h.body[0])), h.count), nil
	}
	return decodeF32(nil, h), nil
}

// DecodeF32 copies the values of an F32 frame into dst (reusing its
// capacity); the result never aliases p.
func DecodeF32(dst []float32, p []byte) ([]float32, error) {
	h, err := parseHeader(p, F32)
	if err != nil {
		return nil, err
	}
	return decodeF32(dst, h), nil
}

func decodeF32(dst []float32, h header) []float32 {
	dst = grow(dst, h.count)
	b := h.body[:len(dst)*4]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return dst
}
