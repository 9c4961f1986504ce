package leaderboard_test

import (
	"fmt"
	"path/filepath"

	"github.com/sagebench/sagebench/internal/leaderboard"
)

// The leaderboard of a results tree: valid runs grouped and averaged,
// invalid ones apart, backends compared on the seeds both ran — when
// they ran the same workload (Q1's two backends did not).
func ExampleBuild() {
	c, err := leaderboard.Collect(filepath.Join("testdata", "results"))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := leaderboard.Build(c, leaderboard.Options{})
	for _, e := range b.Entries {
		fmt.Printf("%s %s reps=%d throughput=%s\n", e.Workload, e.Backend, e.Reps, e.Values["throughput"])
	}
	d := b.Comparisons[0].Metrics[0]
	fmt.Printf("%s vs %s: %s better (p=%.1g), %d invalid apart\n", b.Comparisons[0].Base, b.Comparisons[0].Other, d.Better, d.P, len(b.Invalid))
	// Output:
	// Q1 ray reps=1 throughput=20.0 req/s
	// Q1 sage reps=1 throughput=20.0 req/s
	// Q2 sage reps=3 throughput=100 req/s (95 % CI 97.5–103)
	// Q2 ray reps=3 throughput=70.7 req/s (95 % CI 67.4–74.2)
	// Q4 sage reps=2 throughput=10.5 req/s (95 % CI 5.72–19.2)
	// Q4 sage reps=2 throughput=19.5 req/s (95 % CI 14.1–27.0)
	// ray vs sage: sage better (p=1e-05), 2 invalid apart
}
