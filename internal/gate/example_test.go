package gate_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/gate"
)

// With alpha 0.01 the Mann-Whitney U test needs five samples per side:
// four can never produce a p-value below 0.0286.
func ExampleMinSamples() {
	fmt.Println(gate.MinSamples(0.01), gate.MinSamples(0.05))
	fmt.Printf("%.4f\n", gate.MinAttainableP(4, 4))
	// Output:
	// 5 4
	// 0.0286
}
