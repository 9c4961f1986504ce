package report_test

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/sagebench/sagebench/internal/report"
)

// One run directory becomes one page; the figures can also be written
// as SVG or PNG files.
func ExampleBuild() {
	rep, err := report.Build(report.Config{Dirs: []string{filepath.Join("testdata", "runs", "q5-drill")},
		Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range rep.AllFigures() {
		fmt.Println(f.ID, "-", f.Title)
	}
	fmt.Println(rep.WriteHTML(io.Discard))
	// Output:
	// answer - Windowed p99 and throughput through the drill
	// e2e-cdf - End-to-end latency, CDF by tenant
	// throughput - Throughput and errors over time
	// latency - Windowed latency over time
	// metric1 - gateway_queue_depth
	// metric2 - gateway_requests_total
	// <nil>
}
