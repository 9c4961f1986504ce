package codec_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/codec"
)

func Example() {
	grad := []float32{0.5, -1.25, 3}
	frame := codec.AppendF32(nil, grad)
	view, err := codec.ViewF32(frame) // aliases frame: no copy
	fmt.Println(view, err, len(frame))

	half, _ := codec.DecodeF16(nil, codec.AppendF16(nil, []float32{1.0009765625, 70000}))
	fmt.Println(half)
	// Output:
	// [0.5 -1.25 3] <nil> 20
	// [1.0009766 +Inf]
}
