package stats

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/benchset"
)

// benchText returns nBench benchmarks × reps lines of Go benchmark text
// with three units each.
func benchText(nBench, reps int, scale float64, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: example.com/big\n")
	for r := 0; r < reps; r++ {
		for i := 0; i < nBench; i++ {
			ns := float64(1000+i) * scale * (1 + 0.05*rng.Float64())
			fmt.Fprintf(&b, "BenchmarkOp/case=%d/size=%d-2 \t1000\t%.1f ns/op\t%d B/op\t%d allocs/op\n", i/10, i%10, ns, 64+i%7, i%3)
		}
	}
	return b.String()
}

// BenchmarkCompare10kLines reads and compares two inputs of 10,000
// benchmark lines each (1,000 benchmarks × 10 runs, 3 units): the
// end-to-end cost of `sagebench compare` without printing.
func BenchmarkCompare10kLines(b *testing.B) {
	base, cur := benchText(1000, 10, 1, 1), benchText(1000, 10, 1.02, 2)
	b.SetBytes(int64(len(base) + len(cur)))
	for b.Loop() {
		bs, err := benchset.ReadBench(strings.NewReader(base), "base.txt", "base")
		if err != nil {
			b.Fatal(err)
		}
		cs, err := benchset.ReadBench(strings.NewReader(cur), "current.txt", "current")
		if err != nil {
			b.Fatal(err)
		}
		results, units := benchset.Combine(bs, cs)
		rep, err := Compare(results, units, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Tables) != 3 || len(rep.Tables[0].Rows) != 1000 {
			b.Fatalf("tables %d rows %d", len(rep.Tables), len(rep.Tables[0].Rows))
		}
	}
}
