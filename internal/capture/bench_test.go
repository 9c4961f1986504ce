package capture

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// BenchmarkParseText parses the 21 KB expfmt test exposition (text format).
func BenchmarkParseText(b *testing.B) {
	data, err := os.ReadFile("testdata/expfmt_text.txt")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(strings.NewReader(string(data)), "text/plain", "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssemble windows a full-cap capture: 2000 counter series, 3
// windows of 40 scrapes each (the 200 s / 5 s default).
func BenchmarkAssemble(b *testing.B) {
	const series, k, windows = 2000, 40, 3
	t0 := time.Unix(0, 0)
	ticks := make([][]Sample, windows*k+1)
	for i := range ticks {
		ss := make([]Series, series)
		for j := range ss {
			ss[j] = Series{Name: "req_total", Labels: map[string]string{"id": fmt.Sprint(j)}, Type: TypeCounter, Value: float64(i * j)}
		}
		ticks[i] = []Sample{{Target: "t", At: t0.Add(time.Duration(i) * 5 * time.Second), Series: ss}}
	}
	cfg := Config{Targets: []string{"t"}, Windows: windows, Window: 200 * time.Second, Interval: 5 * time.Second, Now: func() time.Time { return t0 }}
	for b.Loop() {
		if c := assemble(cfg, ticks, k, t0, 5*time.Second); len(c.Metrics) != series {
			b.Fatalf("%d metrics", len(c.Metrics))
		}
	}
}
