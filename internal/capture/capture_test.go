package capture

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// exporter serves a registry whose counter grows by 10 and whose
// histogram observes 0.05 and 0.3 on every scrape, so window deltas are
// exact whatever the timing. failAfter > 0 makes scrapes after that many
// answer 503.
type exporter struct {
	mu        sync.Mutex
	n         int
	failAfter int
	reqs      prometheus.Counter
	depth     prometheus.Gauge
	lat       prometheus.Histogram
	handler   http.Handler
}

func newExporter(t *testing.T, failAfter int) (*exporter, *httptest.Server) {
	t.Helper()
	reg := prometheus.NewRegistry()
	e := &exporter{failAfter: failAfter,
		reqs:  prometheus.NewCounter(prometheus.CounterOpts{Name: "app_requests_total", Help: "requests"}),
		depth: prometheus.NewGauge(prometheus.GaugeOpts{Name: "app_queue_depth", Help: "queue depth"}),
		lat: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "app_latency_seconds", Help: "latency",
			Buckets: []float64{0.1, 0.25, 0.5, 1}}),
	}
	reg.MustRegister(e.reqs, e.depth, e.lat)
	e.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return e, srv
}

func (e *exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.n++
	n := e.n
	e.reqs.Add(10)
	e.depth.Set(float64(n))
	e.lat.Observe(0.05)
	e.lat.Observe(0.3)
	e.mu.Unlock()
	if e.failAfter > 0 && n > e.failAfter {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	e.handler.ServeHTTP(w, r)
}

func findMetric(t *testing.T, c *Capture, name string) Metric {
	t.Helper()
	for _, m := range c.Metrics {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("metric %s not captured; have %d metrics", name, len(c.Metrics))
	return Metric{}
}

func TestRunAgainstExporter(t *testing.T) {
	_, srv := newExporter(t, 0)
	var progress []int
	cfg := Config{Targets: []string{srv.URL + "/metrics"}, Windows: 2, Window: 40 * time.Millisecond,
		Interval: 20 * time.Millisecond, Timeout: 30 * time.Second, Selector: Selector{Names: []string{"app_.*"}},
		PIDs: []int{os.Getpid()}, Progress: func(p Progress) {
			if p.WindowDone() {
				progress = append(progress, p.Window)
			}
		}}
	c, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Schema != SchemaVersion || len(c.Windows) != 2 || len(c.Metrics) != 3 {
		t.Fatalf("schema %q, %d windows, %d metrics; want %q, 2, 3", c.Schema, len(c.Windows), len(c.Metrics), SchemaVersion)
	}
	reqs := findMetric(t, c, "app_requests_total")
	for _, w := range reqs.Windows {
		// Two scrape periods per window, each adding 10.
		if w.Missing || w.Delta != 20 || w.Rate == nil || *w.Rate <= 0 {
			t.Errorf("counter window %+v: want delta 20 and a positive rate", w)
		}
	}
	if reqs.TotalDelta == nil || *reqs.TotalDelta != 40 || reqs.StatOf != "rate" || reqs.Stats.N != 2 {
		t.Errorf("counter total %v, stat of %q, n %d; want 40, rate, 2", reqs.TotalDelta, reqs.StatOf, reqs.Stats.N)
	}
	lat := findMetric(t, c, "app_latency_seconds")
	w0 := lat.Windows[0]
	// Two observations per scrape period: one in (0,0.1], one in (0.25,0.5].
	if w0.Delta != 4 || w0.P50 == nil || *w0.P50 != 0.1 || w0.P99 == nil || math.Abs(*w0.P99-0.495) > 1e-9 {
		t.Errorf("histogram window %+v: want delta 4, p50 0.1, p99 0.495 (0.25 + 0.25×1.96/2)", w0)
	}
	if depth := findMetric(t, c, "app_queue_depth"); depth.StatOf != "mean" || depth.Windows[1].Mean == nil {
		t.Errorf("gauge %+v: want window means", depth)
	}
	if len(progress) != 2 || len(c.Processes) != 1 || c.Processes[0].MaxRSS <= 0 {
		t.Errorf("progress %v, processes %+v: want 2 progress calls and this process with its RSS", progress, c.Processes)
	}
}

func TestRunDeadExporterMidCapture(t *testing.T) {
	_, srv := newExporter(t, 3) // scrapes 1-3 succeed: window 0 only
	cfg := Config{Targets: []string{srv.URL}, Windows: 3, Window: 20 * time.Millisecond, Interval: 10 * time.Millisecond, Timeout: 30 * time.Second}
	c, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("a capture with some good scrapes must not fail: %v", err)
	}
	if len(c.Windows[0].Missing) != 0 || len(c.Windows[1].Missing) != 1 || len(c.Windows[2].Missing) != 1 {
		t.Errorf("windows %+v: want window 0 present, 1 and 2 missing", c.Windows)
	}
	if c.Targets[0].Failed != 4 || !strings.Contains(c.Targets[0].Errors[0], "503") {
		t.Errorf("target %+v: want 4 failed scrapes with the HTTP status", c.Targets[0])
	}
	if m := findMetric(t, c, "app_requests_total"); !m.Windows[1].Missing || m.Stats.N != 1 {
		t.Errorf("metric %+v: want window 1 missing and stats over one window", m)
	}
}

func TestRunAllScrapesFail(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // nothing listens there any more
	cfg := Config{Targets: []string{srv.URL}, Windows: 1, Window: 20 * time.Millisecond, Interval: 10 * time.Millisecond}
	c, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrAllFailed) || c == nil {
		t.Fatalf("err %v, capture %v: want ErrAllFailed and the capture", err, c)
	}
}

func TestRunCancelled(t *testing.T) {
	_, srv := newExporter(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := Run(ctx, Config{Targets: []string{srv.URL}, Windows: 2, Window: time.Hour})
	if !errors.Is(err, context.Canceled) || c == nil || len(c.Notes) == 0 {
		t.Fatalf("err %v, capture %+v: want the partial capture with a note and context.Canceled", err, c)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no target", Config{}, "targets"},
		{"not http", Config{Targets: []string{"ftp://x/metrics"}}, "http(s) URL"},
		{"interval above window", Config{Targets: []string{"http://127.0.0.1:1/"}, Window: time.Second, Interval: 2 * time.Second}, "interval"},
		{"too many scrapes", Config{Targets: []string{"http://127.0.0.1:1/"}, Windows: 2000, Window: time.Second, Interval: 10 * time.Millisecond}, "100000"},
		{"bad regex", Config{Targets: []string{"http://127.0.0.1:1/"}, Selector: Selector{Names: []string{"("}}}, "match"},
		{"bad matcher", Config{Targets: []string{"http://127.0.0.1:1/"}, Selector: Selector{Labels: []string{"job"}}}, "label matcher"},
		{"bad pid", Config{Targets: []string{"http://127.0.0.1:1/"}, PIDs: []int{0}}, "pid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	ok := Config{Targets: []string{"http://127.0.0.1:9/metrics"}}
	if err := ok.Validate(); err != nil || ok.Windows != 3 || ok.Window != 200*time.Second || ok.Interval != 5*time.Second {
		t.Errorf("defaults: err %v, %d × %v every %v; want 3 × 200s every 5s", err, ok.Windows, ok.Window, ok.Interval)
	}
}

func TestWriteMarkdownAndJSON(t *testing.T) {
	_, srv := newExporter(t, 0)
	c, err := Run(context.Background(), Config{Targets: []string{srv.URL}, Windows: 1, Window: 20 * time.Millisecond, Interval: 10 * time.Millisecond, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| app_requests_total | counter | rate |", "| app_latency_seconds | histogram |", srv.URL} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("capture.md lacks %q:\n%s", want, b.String())
		}
	}
	js, err := EncodeJSON(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeJSON(js)
	if err != nil || len(back.Metrics) != len(c.Metrics) {
		t.Fatalf("round trip: %v, %d metrics; want %d", err, len(back.Metrics), len(c.Metrics))
	}
	if _, err := DecodeJSON([]byte(`{"schema":"sagebench.capture/v0"}`)); err == nil {
		t.Error("DecodeJSON accepted another schema version")
	}
	os.WriteFile(filepath.Join(t.TempDir(), JSONFile), js, 0o644)
}

// TestHugeValuesStayWritable: values near the top of float64 from an
// exporter (finite in every window) never make capture.json unwritable:
// the mean stays within [min, max] and a total beyond float64 is absent.
func TestHugeValuesStayWritable(t *testing.T) {
	s := Summarize([]float64{1e308, 1e308, 1.7e308})
	if _, err := json.Marshal(s); err != nil || s.Mean < 1e308 || s.Mean > 1.7e308 {
		t.Fatalf("Summarize: %+v, %v", s, err)
	}
	ms := finishMetrics(map[string]*Metric{"c": {Name: "c", Type: TypeCounter,
		Windows: []MetricWindow{{Delta: 1.5e308}, {Delta: 1.5e308}}}})
	if _, err := json.Marshal(ms); err != nil || ms[0].TotalDelta != nil {
		t.Fatalf("a total beyond float64: %v, %v", ms[0].TotalDelta, err)
	}
}
