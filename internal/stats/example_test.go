package stats_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/stats"
)

// Direction makes explicit which way each unit gets worse.
func ExampleDirection() {
	for _, u := range []string{"ns/op", "p99-ms", "req/s", "slo-attainment"} {
		fmt.Println(u, stats.Worse(stats.Direction(u, nil), 100, 110))
	}
	// Output:
	// ns/op true
	// p99-ms true
	// req/s false
	// slo-attainment false
}
