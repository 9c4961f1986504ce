package run

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/sagebench/sagebench/internal/capture"
	"github.com/sagebench/sagebench/internal/target"
)

// summaryMetrics are the target metrics whose mean, p95 and max go into
// run.json's summary.target_metrics (the whole series stays in
// metrics.jsonl).
var summaryMetrics = []string{"sagebench_gateway_queue_depth", "sagebench_engine_running"}

// scrape records the target's /metrics every second into the run
// directory's metrics.jsonl while the traffic runs; stop ends it and
// returns notes (a target without /metrics is noted, not an error) and
// the condensed target metrics.
func scrape(ctx context.Context, t *target.Target, dir string) (stop func() ([]string, map[string]float64)) {
	url, err := capture.MetricsURL(t.URL())
	if err != nil {
		return func() ([]string, map[string]float64) {
			return []string{"target metrics not scraped: " + err.Error()}, nil
		}
	}
	path := filepath.Join(dir, capture.MetricsFile)
	rec, err := capture.NewRecorder(capture.RecorderConfig{Targets: []string{url}, Path: path,
		Selector: capture.Selector{Names: []string{"sagebench_.*", "vllm:.*", "sglang:.*"}},
		Redact:   t.Redactor().String}) // names and labels are the target's text
	if err != nil {
		return func() ([]string, map[string]float64) {
			return []string{"target metrics not scraped: " + err.Error()}, nil
		}
	}
	running := rec.Start(ctx)
	return func() ([]string, map[string]float64) {
		res, err := running.Stop()
		notes := res.Notes
		if err != nil {
			notes = append(notes, "target metrics: "+err.Error())
		}
		return notes, metricExtras(path)
	}
}

// metricExtras condenses the recorded series named in summaryMetrics.
func metricExtras(path string) map[string]float64 {
	tl, err := capture.ReadMetricsFile(path)
	if err != nil {
		return nil
	}
	var keep []capture.RunMetric
	for _, m := range tl.Condense() {
		for _, name := range summaryMetrics {
			if strings.HasPrefix(m.Key, name) {
				keep = append(keep, m)
			}
		}
	}
	return capture.Extra(keep)
}
