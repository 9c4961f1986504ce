package codec

import (
	"bytes"
	"math"
	"testing"
)

func FuzzDecode(f *testing.F) {
	v := []float32{0, 1, -2.5, 1e-6, float32(math.Inf(1))}
	f.Add(AppendF32(nil, v))
	f.Add(AppendF16(nil, v))
	i8, _ := AppendI8(nil, v[:4])
	f.Add(i8)
	f.Add([]byte("sg\x01\x01\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, p []byte) {
		got, err := Decode(nil, p)
		if err != nil {
			return
		}
		switch Format(p[3]) {
		case F32: // re-encoding reproduces the payload exactly
			if !bytes.Equal(AppendF32(nil, got), p) {
				t.Fatal("F32 decode/encode is not the identity")
			}
			view, err := ViewF32(p)
			if err != nil || len(view) != len(got) {
				t.Fatalf("ViewF32 disagrees with Decode: %v", err)
			}
		case F16: // every binary16 value survives except NaN payloads
			again, err := DecodeF16(nil, AppendF16(nil, got))
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if math.Float32bits(again[i]) != math.Float32bits(got[i]) && !(got[i] != got[i] && again[i] != again[i]) {
					t.Fatalf("value %d: %v re-decoded as %v", i, got[i], again[i])
				}
			}
		case I8: // finite and within ±127·scale
			scale := math.Float32frombits(uint32(p[8]) | uint32(p[9])<<8 | uint32(p[10])<<16 | uint32(p[11])<<24)
			for i, x := range got {
				if x-x != 0 || abs32(x) > 127*scale {
					t.Fatalf("value %d = %v outside ±127·%v", i, x, scale)
				}
			}
		}
	})
}

func FuzzUnmarshalJSON(f *testing.F) {
	f.Add([]byte(`[1,2.5,-3e-7]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, p []byte) {
		v, err := UnmarshalJSON(p)
		if err != nil {
			return
		}
		q, err := MarshalJSON(v)
		if err != nil {
			t.Fatalf("decoded %v but cannot re-encode: %v", v, err)
		}
		w, err := UnmarshalJSON(q)
		if err != nil || len(w) != len(v) {
			t.Fatalf("re-encoded payload does not decode: %v", err)
		}
	})
}

func abs32(x float32) float32 {
	return math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
}
