package capture

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recordFor runs a Recorder until stop reports true (bounded by a
// generous deadline) and returns its result.
func recordFor(t *testing.T, cfg RecorderConfig, stop func() bool) RecorderResult {
	t.Helper()
	rec, err := NewRecorder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil && !stop() {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	res, err := rec.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRecorderWritesMetricsJSONL(t *testing.T) {
	e, srv := newExporter(t, 0)
	path := filepath.Join(t.TempDir(), MetricsFile)
	scrapes := func() bool { e.mu.Lock(); defer e.mu.Unlock(); return e.n >= 4 }
	res := recordFor(t, RecorderConfig{Targets: []string{srv.URL}, Path: path, Interval: 10 * time.Millisecond}, scrapes)
	if res.Lines < 3 || res.Truncated {
		t.Fatalf("result %+v: want at least 3 lines, not truncated", res)
	}
	tl, err := ReadMetricsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sawRate, sawGauge bool
	for _, m := range tl.Condense() {
		switch m.Key {
		case "app_requests_total":
			sawRate = m.Type == TypeCounter && m.Of == "rate" && m.Mean > 0
		case "app_queue_depth":
			sawGauge = m.Type == TypeGauge && m.Max >= 3
		}
	}
	if !sawRate || !sawGauge {
		t.Errorf("condensed %+v: want a positive request rate and the queue depth", tl.Condense())
	}
	if ex := Extra(tl.Condense()); ex["metrics:app_latency_seconds_count:mean"] <= 0 {
		t.Errorf("extra %v lacks the histogram count rate", ex)
	}
}

func TestRecorderBoundedAndTargetWithoutMetrics(t *testing.T) {
	_, srv := newExporter(t, 0)
	path := filepath.Join(t.TempDir(), MetricsFile)
	lines := func() bool { b, _ := os.ReadFile(path); return len(b) > 0 }
	cfg := RecorderConfig{Targets: []string{srv.URL}, Path: path, Interval: 10 * time.Millisecond, MaxLines: 2}
	n := 0
	res := recordFor(t, cfg, func() bool { n++; return n > 40 || lines() })
	if res.Lines > 2 {
		t.Errorf("wrote %d lines, want at most the bound 2", res.Lines)
	}
	missing := filepath.Join(t.TempDir(), MetricsFile)
	closed := "http://127.0.0.1:1/metrics" // port 1 on loopback: refused
	res = recordFor(t, RecorderConfig{Targets: []string{closed}, Path: missing, Interval: 10 * time.Millisecond}, func() bool {
		b, _ := os.ReadFile(missing)
		return len(b) > 0
	})
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "has no usable /metrics") {
		t.Errorf("notes %v: want a note that the target has no /metrics", res.Notes)
	}
}

func TestReadMetricsBadLines(t *testing.T) {
	in := `{"t":"2026-01-01T00:00:00Z","target":"u","values":{"c":1},"types":{"c":"counter"}}
not json
{"t":"2026-01-01T00:00:01Z","target":"u","values":{"c":0.5}}
{"t":"2026-01-01T00:00:02Z","target":"u","error":"down"}
{"target":"u"}
`
	tl, err := ReadMetrics(strings.NewReader(in), "m.jsonl")
	if err == nil || !strings.Contains(err.Error(), "m.jsonl:2:") || !strings.Contains(err.Error(), "m.jsonl:5:") {
		t.Errorf("err %v: want lines 2 and 5 named", err)
	}
	if tl.Lines != 3 || tl.Failed != 1 || len(tl.Series) != 1 {
		t.Fatalf("timeline %+v: want 3 lines, 1 failed, 1 series", tl)
	}
	if _, rs := tl.Series[0].Rates(); len(rs) != 1 || rs[0] != 0.5 {
		t.Errorf("rates %v: a decrease is a reset, want [0.5]", rs)
	}
}

func FuzzReadMetrics(f *testing.F) {
	f.Add(`{"t":"2026-01-01T00:00:00Z","target":"u","values":{"c":1},"types":{"c":"counter"}}` + "\n")
	f.Add("{}\n\n{\"t\":1}")
	f.Fuzz(func(t *testing.T, in string) {
		tl, _ := ReadMetrics(strings.NewReader(in), "f")
		if tl == nil {
			t.Fatal("nil timeline")
		}
		tl.Condense()
	})
}
