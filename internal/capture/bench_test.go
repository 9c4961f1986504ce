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

// omExposition is an OpenMetrics exposition of about size bytes: 100
// histograms of 50 buckets each (with timestamps and exemplars on some)
// and counters, repeated under new label values.
func omExposition(size int) string {
	var b strings.Builder
	b.WriteString("# TYPE rpc_seconds histogram\n")
	for s := 0; b.Len() < size/2; s++ {
		for i := 1; i <= 50; i++ {
			fmt.Fprintf(&b, "rpc_seconds_bucket{route=\"/v1/r%d\",le=\"%g\"} %d 1520879607.789\n", s, float64(i)/100, i*s)
		}
		fmt.Fprintf(&b, "rpc_seconds_bucket{route=\"/v1/r%d\",le=\"+Inf\"} %d # {trace_id=\"t%d\"} 0.7\nrpc_seconds_count{route=\"/v1/r%d\"} %d\nrpc_seconds_sum{route=\"/v1/r%d\"} 1.5\n", s, 50*s, s, s, 50*s, s)
	}
	b.WriteString("# TYPE requests counter\n")
	for s := 0; b.Len() < size; s++ {
		fmt.Fprintf(&b, "requests_total{code=\"200\",route=\"/v1/r%d\"} %d\nrequests_created{code=\"200\",route=\"/v1/r%d\"} 1520430000\n", s, s, s)
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// BenchmarkParseOpenMetrics parses a 1 MB OpenMetrics exposition (the
// budget: ≤ 50 ms on a quiet machine) and the 10,001-bucket histogram
// of issue 41 (refused at MaxBuckets after a linear parse). Before the
// line translation (omText), expfmt's OpenMetrics decoder took seconds
// for a few thousand lines.
func BenchmarkParseOpenMetrics(b *testing.B) {
	for _, in := range []struct {
		name string
		data string
	}{{"1MB", omExposition(1 << 20)}, {"10001buckets", omHistogramText(10_000)}} {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			for b.Loop() {
				_, err := Parse(strings.NewReader(in.data), "application/openmetrics-text; version=1.0.0; charset=utf-8", "bench")
				if err != nil && in.name == "1MB" {
					b.Fatal(err)
				}
			}
		})
	}
}

func omHistogramText(n int) string {
	var b strings.Builder
	b.WriteString("# TYPE h histogram\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "h_bucket{le=\"%g\"} %d\n", float64(i)/1000, i)
	}
	fmt.Fprintf(&b, "h_bucket{le=\"+Inf\"} %d\nh_count %d\nh_sum 1\n# EOF\n", n, n)
	return b.String()
}
