package leaderboard_test

import (
	"fmt"
	"path/filepath"

	"github.com/sagebench/sagebench/internal/leaderboard"
)

// The leaderboard of a results tree: valid runs grouped and averaged,
// invalid ones apart, backends compared on the seeds both ran.
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
	// Q1 sage reps=1 throughput=20
	// Q2 sage reps=3 throughput=100.2 ± 2.8
	// Q2 ray reps=3 throughput=70.73 ± 3.4
	// Q4 sage reps=2 throughput=10.5 ± 6.4
	// Q4 sage reps=2 throughput=19.5 ± 6.4
	// ray vs sage: sage better (p=1e-05), 2 invalid apart
}
