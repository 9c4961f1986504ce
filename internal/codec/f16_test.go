package codec

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

var exhaustive = flag.Bool("fp16.exhaustive", false, "check F16Bits against x448/float16 for all 2^32 float32 values (about a minute)")

func TestF16FloatAllValues(t *testing.T) {
	for h := range 1 << 16 {
		got := math.Float32bits(F16Float(uint16(h)))
		want := math.Float32bits(float16.Frombits(uint16(h)).Float32())
		if isNaN16(uint16(h)) {
			// x448 also sets the quiet bit; F16Float keeps the bits as
			// they are. Both must be a NaN with the same sign and payload.
			want &^= 1 << 22
			got &^= 1 << 22
		}
		if got != want {
			t.Fatalf("F16Float(%#04x) = %#08x, x448 gives %#08x", h, got, want)
		}
		if back := F16Bits(F16Float(uint16(h))); back != uint16(h) && !isNaN16(uint16(h)) {
			t.Fatalf("F16Bits(F16Float(%#04x)) = %#04x: binary16 values must round-trip", h, back)
		}
	}
}

func isNaN16(h uint16) bool { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }

// checkF16 compares F16Bits with x448/float16 for the float32 bits b.
func checkF16(t *testing.T, b uint32) {
	got := F16Bits(math.Float32frombits(b))
	want := float16.Fromfloat32(math.Float32frombits(b)).Bits()
	if got != want {
		t.Fatalf("F16Bits(%#08x = %v) = %#04x, x448 gives %#04x", b, math.Float32frombits(b), got, want)
	}
}

// TestF16BitsRoundingBoundaries covers every combination of sign, exponent
// and kept mantissa bits with the dropped bits at each rounding boundary
// (zero, just below/at/above the tie, all ones), including the wider
// dropped fields of subnormal results.
func TestF16BitsRoundingBoundaries(t *testing.T) {
	for hi := uint32(0); hi < 1<<19; hi++ {
		exp := int(hi>>10) & 0xff
		dropped := 13 // mantissa bits below the kept ten
		if exp < 113 && exp >= 102 {
			dropped = min(23, 13+113-exp)
		}
		base := hi << 13
		half := uint32(1) << (dropped - 1)
		for _, low := range []uint32{0, 1, half - 1, half, half + 1, 2*half - 1} {
			mask := uint32(1)<<dropped - 1 // within the mantissa
			b := base&^mask | low&mask
			checkF16(t, b)
		}
	}
}

func TestF16BitsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 1 << 20 {
		checkF16(t, r.Uint32())
	}
}

func TestF16BitsExhaustive(t *testing.T) {
	if !*exhaustive {
		t.Skip("run with -fp16.exhaustive to check all 2^32 float32 values")
	}
	for b := uint64(0); b < 1<<32; b++ {
		if F16Bits(math.Float32frombits(uint32(b))) != float16.Fromfloat32(math.Float32frombits(uint32(b))).Bits() {
			checkF16(t, uint32(b))
		}
	}
}

func TestF16BitsSpecialValues(t *testing.T) {
	tests := []struct {
		name string
		in   float32
		want uint16
	}{
		{"zero", 0, 0x0000},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
		{"one", 1, 0x3c00},
		{"largest half", 65504, 0x7bff},
		{"below the Inf tie rounds down", 65519.996, 0x7bff},
		{"Inf tie rounds to even (Inf)", 65520, 0x7c00},
		{"overflow", 1e6, 0x7c00},
		{"negative overflow", -1e6, 0xfc00},
		{"+Inf", float32(math.Inf(1)), 0x7c00},
		{"smallest subnormal", 0x1p-24, 0x0001},
		{"half the smallest subnormal ties to even zero", 0x1p-25, 0x0000},
		{"just above that rounds up", math.Float32frombits(0x33000001), 0x0001},
		{"1.5 subnormal steps ties to even 2", 0x1.8p-24, 0x0002},
		{"tie between 1 and next rounds to even", 1 + 0x1p-11, 0x3c00},
		{"tie above odd mantissa rounds up", 1 + 3*0x1p-11, 0x3c02},
		{"largest subnormal", 0x3ffp-24, 0x03ff},
		{"subnormal rounding up to smallest normal", 0x1p-14 - 0x1p-26, 0x0400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := F16Bits(tc.in); got != tc.want {
				t.Errorf("F16Bits(%v) = %#04x, want %#04x", tc.in, got, tc.want)
			}
		})
	}
	nan := math.Float32frombits(0x7f800001) // signalling NaN, payload only in low bits
	if h := F16Bits(nan); !isNaN16(h) {
		t.Errorf("F16Bits(sNaN) = %#04x, not a NaN", h)
	}
	if h := F16Bits(-float32(math.NaN())); !isNaN16(h) || h&0x8000 == 0 {
		t.Errorf("F16Bits(-NaN) = %#04x, want a negative NaN", h)
	}
}
