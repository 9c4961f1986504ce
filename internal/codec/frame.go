package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Format identifies a binary payload.
type Format uint8

// Binary formats.
const (
	F32 Format = 1 // little-endian IEEE 754 binary32
	F16 Format = 2 // little-endian IEEE 754 binary16
	I8  Format = 3 // int8 values in [-127, 127] times a float32 scale
)

func (f Format) String() string {
	switch f {
	case F32:
		return "f32"
	case F16:
		return "f16"
	case I8:
		return "i8"
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// elemSize is the encoded size of one value.
func (f Format) elemSize() int {
	switch f {
	case F32:
		return 4
	case F16:
		return 2
	case I8:
		return 1
	}
	return 0
}

// HeaderSize is the size of the common frame header. The float32 values of
// an F32 frame start at this offset, so a frame in an 8-byte aligned
// buffer decodes as a zero-copy view.
const HeaderSize = 8

// i8HeaderSize is the header of an I8 frame: common header plus scale.
const i8HeaderSize = HeaderSize + 4

const (
	magic0, magic1 = 's', 'g'
	version        = 1
)

// Sentinel errors; decoders wrap them with detail.
var (
	ErrTruncated = errors.New("codec: payload shorter than its header")
	ErrMagic     = errors.New("codec: not a sagebench gradient frame")
	ErrFormat    = errors.New("codec: unsupported version or format")
	ErrLength    = errors.New("codec: payload length does not match its element count")
	ErrCorrupt   = errors.New("codec: invalid value in payload")
	ErrNonFinite = errors.New("codec: value not representable in this format")
)

// appendHeader appends the common header for n values of format f.
func appendHeader(dst []byte, f Format, n int) []byte {
	return binary.LittleEndian.AppendUint32(append(dst, magic0, magic1, version, byte(f)), uint32(n))
}

// header is a parsed frame header.
type header struct {
	format Format
	count  int
	body   []byte // the values (after the I8 scale)
	scale  float32
}

// parseHeader validates p as a frame of format want and returns its body.
func parseHeader(p []byte, want Format) (header, error) {
	if len(p) < HeaderSize {
		return header{}, fmt.Errorf("%w: %d bytes, need at least %d", ErrTruncated, len(p), HeaderSize)
	}
	if p[0] != magic0 || p[1] != magic1 {
		return header{}, fmt.Errorf("%w: magic %q", ErrMagic, p[:2])
	}
	f := Format(p[3])
	if p[2] != version || f.elemSize() == 0 {
		return header{}, fmt.Errorf("%w: version %d, format %d", ErrFormat, p[2], p[3])
	}
	if want != 0 && f != want {
		return header{}, fmt.Errorf("%w: payload is %v, want %v", ErrFormat, f, want)
	}
	h := header{format: f, count: int(binary.LittleEndian.Uint32(p[4:8]))}
	off := HeaderSize
	if f == I8 {
		if len(p) < i8HeaderSize {
			return header{}, fmt.Errorf("%w: %d bytes, i8 needs %d", ErrTruncated, len(p), i8HeaderSize)
		}
		h.scale = math.Float32frombits(binary.LittleEndian.Uint32(p[8:12]))
		if !(h.scale >= 0) || float64(h.scale)*127 > math.MaxFloat32 {
			return header{}, fmt.Errorf("%w: i8 scale %v", ErrCorrupt, h.scale)
		}
		off = i8HeaderSize
	}
	want64 := int64(off) + int64(h.count)*int64(f.elemSize())
	if int64(len(p)) != want64 {
		return header{}, fmt.Errorf("%w: %d bytes for %d %v values, want %d", ErrLength, len(p), h.count, f, want64)
	}
	h.body = p[off:]
	return h, nil
}

// Decode decodes any binary frame into dst (reusing its capacity) and
// returns the values.
func Decode(dst []float32, p []byte) ([]float32, error) {
	h, err := parseHeader(p, 0)
	if err != nil {
		return nil, err
	}
	switch h.format {
	case F32:
		return decodeF32(dst, h), nil
	case F16:
		return decodeF16(dst, h), nil
	default:
		return decodeI8(dst, h)
	}
}

// grow returns dst resized to n, reusing its capacity.
func grow(dst []float32, n int) []float32 {
	if cap(dst) < n {
		return make([]float32, n)
	}
	return dst[:n]
}
