package micro

import (
	"fmt"
	"testing"

	"github.com/sagebench/sagebench/internal/codec"
)

// codecOp is one codec operation measured per dimension.
type codecOp struct {
	format, op string
	body       func(b *testing.B, v []float32)
}

var codecOps = []codecOp{
	{"json", "encode", benchJSONEncode},
	{"json", "decode", benchJSONDecode},
	{"zerocopy", "encode", benchF32Encode},
	{"zerocopy", "decode", benchF32View},
	{"fp16", "encode", benchF16Encode},
	{"fp16", "decode", benchF16Decode},
	{"int8", "encode", benchI8Encode},
	{"int8", "decode", benchI8Decode},
}

// codecCases is format × op × dim. Every case reports bytes of float32
// input (dim·4) so MB/s compares formats on the same basis, and
// cpu-ns/op (the per-core cost, whatever else the machine is running).
func codecCases() []Case {
	var cases []Case
	for _, op := range codecOps {
		for _, d := range codecDims {
			body := op.body
			cases = append(cases, Case{
				Bench: "Codec",
				Sub:   fmt.Sprintf("format=%s/op=%s/dim=%d", op.format, op.op, d),
				Run: func(b *testing.B) {
					v := randomFloats(d, uint64(d))
					b.ReportAllocs()
					b.SetBytes(int64(d) * 4)
					cpu := startCPU()
					body(b, v)
					b.StopTimer()
					cpu.report(b)
				},
			})
		}
	}
	return cases
}

func benchJSONEncode(b *testing.B, v []float32) {
	for range b.N {
		if _, err := codec.MarshalJSON(v); err != nil {
			b.Fatal(err)
		}
	}
}

func benchJSONDecode(b *testing.B, v []float32) {
	p, err := codec.MarshalJSON(v)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := codec.UnmarshalJSON(p); err != nil {
			b.Fatal(err)
		}
	}
}

func benchF32Encode(b *testing.B, v []float32) {
	buf := codec.AppendF32(nil, v)
	b.ResetTimer()
	for range b.N {
		buf = codec.AppendF32(buf[:0], v)
	}
}

func benchF32View(b *testing.B, v []float32) {
	p := codec.AppendF32(nil, v)
	b.ResetTimer()
	for range b.N {
		if _, err := codec.ViewF32(p); err != nil {
			b.Fatal(err)
		}
	}
}

func benchF16Encode(b *testing.B, v []float32) {
	buf := codec.AppendF16(nil, v)
	b.ResetTimer()
	for range b.N {
		buf = codec.AppendF16(buf[:0], v)
	}
}

func benchF16Decode(b *testing.B, v []float32) {
	p := codec.AppendF16(nil, v)
	out := make([]float32, len(v))
	b.ResetTimer()
	for range b.N {
		var err error
		if out, err = codec.DecodeF16(out, p); err != nil {
			b.Fatal(err)
		}
	}
}

func benchI8Encode(b *testing.B, v []float32) {
	buf, err := codec.AppendI8(nil, v)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if buf, err = codec.AppendI8(buf[:0], v); err != nil {
			b.Fatal(err)
		}
	}
}

func benchI8Decode(b *testing.B, v []float32) {
	p, err := codec.AppendI8(nil, v)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]float32, len(v))
	b.ResetTimer()
	for range b.N {
		if out, err = codec.DecodeI8(out, p); err != nil {
			b.Fatal(err)
		}
	}
}
