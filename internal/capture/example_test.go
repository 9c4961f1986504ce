package capture_test

import (
	"fmt"
	"math"
	"strings"

	"github.com/sagebench/sagebench/internal/capture"
)

// A histogram's p95 from its cumulative buckets, as PromQL's
// histogram_quantile computes it.
func ExampleHistogramQuantile() {
	buckets := []capture.Bucket{{UpperBound: 0.1, Count: 50}, {UpperBound: 0.5, Count: 90}, {UpperBound: 1, Count: 99}, {UpperBound: math.Inf(1), Count: 100}}
	fmt.Printf("p50 %.3f, p95 %.3f, p999 %.3f\n",
		capture.HistogramQuantile(0.5, buckets), capture.HistogramQuantile(0.95, buckets), capture.HistogramQuantile(0.999, buckets))
	// Output: p50 0.100, p95 0.778, p999 1.000
}

// Parse names the source and line of bad exposition text.
func ExampleParse() {
	_, err := capture.Parse(strings.NewReader("up 1\nbroken{ 2\n"), "text/plain; version=0.0.4", "http://127.0.0.1:8080/metrics")
	fmt.Println(err != nil && strings.HasPrefix(err.Error(), "http://127.0.0.1:8080/metrics: line 2:"))
	series, _ := capture.Parse(strings.NewReader("# TYPE jobs_total counter\njobs_total{kind=\"a\"} 5\n"), "", "file")
	fmt.Println(series[0].Key(), series[0].Type, series[0].Value)
	// Output:
	// true
	// jobs_total{kind="a"} counter 5
}
