package codec

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

func sample(n int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * 0.05)
	}
	return v
}

func TestF32RoundTripIsBitExact(t *testing.T) {
	v := append(sample(1000), float32(math.NaN()), float32(math.Inf(-1)), math.MaxFloat32, 0x1p-149)
	p := AppendF32(nil, v)
	if len(p) != HeaderSize+4*len(v) {
		t.Fatalf("frame is %d bytes, want %d", len(p), HeaderSize+4*len(v))
	}
	for name, decode := range map[string]func([]byte) ([]float32, error){
		"view": ViewF32,
		"copy": func(p []byte) ([]float32, error) { return DecodeF32(nil, p) },
		"any":  func(p []byte) ([]float32, error) { return Decode(nil, p) },
	} {
		got, err := decode(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range v {
			if math.Float32bits(got[i]) != math.Float32bits(v[i]) {
				t.Fatalf("%s: value %d = %v, want %v", name, i, got[i], v[i])
			}
		}
	}
}

func TestViewF32AliasesWithoutAllocating(t *testing.T) {
	p := AppendF32(nil, sample(4096))
	v, err := ViewF32(p)
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.Pointer(&v[0]) != unsafe.Pointer(&p[HeaderSize]) {
		t.Fatal("ViewF32 copied an aligned frame")
	}
	if n := testing.AllocsPerRun(100, func() { v, err = ViewF32(p) }); n != 0 {
		t.Errorf("ViewF32 allocates %v times per call, want 0", n)
	}
	buf := make([]byte, 0, len(p)+64)
	if n := testing.AllocsPerRun(100, func() { buf = AppendF32(buf[:0], v) }); n != 0 {
		t.Errorf("AppendF32 into a large enough buffer allocates %v times, want 0", n)
	}
}

func TestViewF32CopiesMisalignedFrames(t *testing.T) {
	v := sample(33)
	raw := make([]byte, 1, 1+HeaderSize+4*len(v))
	p := AppendF32(raw, v)[1:] // frame starts at an odd address
	got, err := ViewF32(p)
	if err != nil {
		t.Fatal(err)
	}
	if uintptr(unsafe.Pointer(&got[0]))%4 != 0 {
		t.Fatal("misaligned float32 slice returned")
	}
	for i := range v {
		if got[i] != v[i] {
			t.Fatalf("value %d = %v, want %v", i, got[i], v[i])
		}
	}
}

func TestF16RoundTripErrorBound(t *testing.T) {
	v := append(sample(5000), 70000, -1e-9, 3e-6)
	got, err := DecodeF16(nil, AppendF16(nil, v))
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range v {
		ax := math.Abs(float64(x))
		var bound float64
		switch {
		case ax >= 65520:
			if !math.IsInf(float64(got[i]), int(math.Copysign(1, float64(x)))) {
				t.Errorf("%v decoded as %v, want Inf", x, got[i])
			}
			continue
		case ax >= 0x1p-14: // normal: half an ulp, 2^-11 relative
			bound = ax * 0x1p-11
		default: // subnormal: half the spacing 2^-24
			bound = 0x1p-25
		}
		if d := math.Abs(float64(got[i]) - float64(x)); d > bound {
			t.Errorf("%v decoded as %v: error %g > %g", x, got[i], d, bound)
		}
	}
}

func TestI8RoundTripErrorBound(t *testing.T) {
	tests := map[string][]float32{
		"gradients": sample(4096),
		"zeros":     make([]float32, 10),
		"empty":     {},
		"extremes":  {math.MaxFloat32, -math.MaxFloat32, 1},
		"subnormal": {0x1p-149, -0x1p-140},
	}
	for name, v := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := AppendI8(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeI8(nil, p)
			if err != nil {
				t.Fatal(err)
			}
			scale := float64(math.Float32frombits(binary.LittleEndian.Uint32(p[8:12])))
			for i, x := range v {
				bound := scale/2 + 0x1p-24*math.Abs(float64(x)) + 127*0x1p-149
				if d := math.Abs(float64(got[i]) - float64(x)); d > bound {
					t.Errorf("value %d: %v decoded as %v, error %g > %g", i, x, got[i], d, bound)
				}
			}
		})
	}
}

// TestI8ScaleUnderflowQuantizesToZero: when max|v| is so small that
// max|v|/127 rounds to a zero scale, every value must quantize to 0 (not
// to whatever the platform makes of converting ±Inf or NaN to an integer).
func TestI8ScaleUnderflowQuantizesToZero(t *testing.T) {
	v := []float32{0, 0x1p-149, -0x1p-148, float32(math.Copysign(0, -1))}
	p, err := AppendI8(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	if scale := binary.LittleEndian.Uint32(p[8:12]); scale != 0 {
		t.Fatalf("scale bits %#x, want 0 (the test needs an underflowing scale)", scale)
	}
	for i, q := range p[12:] {
		if q != 0 {
			t.Errorf("value %d (%g) quantized to %d, want 0", i, v[i], int8(q))
		}
	}
	got, err := DecodeI8(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range got {
		if math.Float32bits(x) != 0 {
			t.Errorf("value %d decoded as %g, want +0", i, x)
		}
	}
}

func TestEncodersRejectNonFinite(t *testing.T) {
	for _, x := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		if _, err := AppendI8(nil, []float32{1, x}); !errors.Is(err, ErrNonFinite) {
			t.Errorf("AppendI8(%v) error = %v, want ErrNonFinite", x, err)
		}
		if _, err := MarshalJSON([]float32{x}); !errors.Is(err, ErrNonFinite) {
			t.Errorf("MarshalJSON(%v) error = %v, want ErrNonFinite", x, err)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	v := sample(100)
	p, err := MarshalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if got[i] != v[i] {
			t.Fatalf("value %d = %v, want %v", i, got[i], v[i])
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	good := AppendF32(nil, []float32{1, 2, 3})
	goodI8, _ := AppendI8(nil, []float32{1, -1})
	with := func(p []byte, i int, b byte) []byte {
		q := append([]byte(nil), p...)
		q[i] = b
		return q
	}
	badScale := append([]byte(nil), goodI8...)
	copy(badScale[8:12], []byte{0, 0, 0xc0, 0x7f}) // NaN scale
	tests := []struct {
		name string
		p    []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"truncated header", good[:5], ErrTruncated},
		{"bad magic", with(good, 0, 'x'), ErrMagic},
		{"bad version", with(good, 2, 9), ErrFormat},
		{"unknown format", with(good, 3, 77), ErrFormat},
		{"body one byte short", good[:len(good)-1], ErrLength},
		{"body one byte long", append(append([]byte(nil), good...), 0), ErrLength},
		{"count larger than body", with(good, 4, 200), ErrLength},
		{"i8 without scale", goodI8[:10], ErrTruncated},
		{"i8 NaN scale", badScale, ErrCorrupt},
		{"i8 value -128", with(goodI8, 12, 0x80), ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode(nil, tc.p); !errors.Is(err, tc.want) {
				t.Errorf("Decode error = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := ViewF32(AppendF16(nil, []float32{1})); !errors.Is(err, ErrFormat) {
		t.Errorf("ViewF32 of an F16 frame: error = %v, want ErrFormat", err)
	}
	for _, p := range []string{`null`, `{"a":1}`, `[1,"x"]`, `[1e39]`, `[1] x`, `[`} {
		if _, err := UnmarshalJSON([]byte(p)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("UnmarshalJSON(%s) error = %v, want ErrCorrupt", p, err)
		}
	}
}
