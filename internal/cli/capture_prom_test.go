package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/capture"
)

// envRequirePrometheus makes the absence of Debian's prometheus a
// failure instead of a skip (.ci/run sets it after installing it).
const envRequirePrometheus = "SAGEBENCH_REQUIRE_PROMETHEUS"

func prometheusOrSkip(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv(envRequirePrometheus) != "" {
			t.Fatal(envRequirePrometheus + " is set but prometheus is not on PATH")
		}
		t.Skip("prometheus is not installed (apt-get install -y prometheus): the comparison of capture with Prometheus's own query_range is skipped")
	}
	return bin
}

// startPrometheus runs prometheus on 127.0.0.1 (a free port, a temporary
// store) scraping target's /metrics every second, and returns its URL
// once it answers.
func startPrometheus(t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global: {scrape_interval: 1s, scrape_timeout: 900ms}\nscrape_configs:\n  - job_name: sagebench\n    static_configs: [{targets: [%q]}]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var stderr syncBuffer
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
	}
	t.Fatalf("prometheus at %s never became ready: %s", base, stderr.String())
	return ""
}

// promValues evaluates expr with Prometheus's own /api/v1/query_range
// and returns the one series' values by Unix second.
func promValues(t *testing.T, prom, expr string, start, end time.Time, step time.Duration) map[int64]float64 {
	t.Helper()
	q := url.Values{"query": {expr}, "start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(end.Unix(), 10)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	resp, err := http.Get(prom + "/api/v1/query_range?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Values [][2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" || len(body.Data.Result) != 1 {
		t.Fatalf("query_range %s: %v %s %s (%d series)", expr, err, body.Status, body.Error, len(body.Data.Result))
	}
	out := map[int64]float64{}
	for _, p := range body.Data.Result[0].Values {
		v, _ := strconv.ParseFloat(p[1].(string), 64)
		out[int64(p[0].(float64))] = v
	}
	return out
}

// TestCaptureMatchesPrometheus: Debian's prometheus scrapes `sagebench
// serve` every second while requests flow; capture --prometheus over a
// counter, a gauge expression and vector(0)/0 gives, in every window,
// the start, end, delta and rate of the counter and the mean and max of
// the gauge that Prometheus's own query_range computes (x - x offset W,
// avg_over_time and max_over_time over the window's steps), to 1e-9; the
// NaN of vector(0)/0 is left out and counted.
func TestCaptureMatchesPrometheus(t *testing.T) {
	bin := prometheusOrSkip(t)
	cfg := filepath.Join(t.TempDir(), "stack.yaml")
	if err := os.WriteFile(cfg, []byte("index: {size: 100}\nlimits: {shutdown_timeout: 2s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serve, stop := startServe(t, "serve", "--listen", "127.0.0.1:0", "--config", cfg)
	defer stop()
	chat := func() {
		resp, err := http.Post(serve+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`))
		if err == nil {
			resp.Body.Close()
		}
	}
	chat() // the counter exists before the first scrape
	u, _ := url.Parse(serve)
	prom := startPrometheus(t, bin, u.Host)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // 2-3 requests a second, bounded by the test's length
		for i := 0; i < 200 && ctx.Err() == nil; i++ {
			chat()
			time.Sleep(time.Duration(300+100*(i%3)) * time.Millisecond)
		}
	}()
	const windows, window, step = 3, 2 * time.Second, time.Second
	const counter = `sagebench_gateway_request_duration_seconds_count{type="llm"}`
	first := firstSample(t, prom, counter)
	time.Sleep(time.Until(first.Add(windows*window + 3*time.Second))) // the span after the first scrape, the last one landing
	end := time.Unix(time.Now().Add(-1500*time.Millisecond).Unix(), 0)
	gauge := "sum(" + counter + ") * 2"
	c, err := capture.Run(context.Background(), capture.Config{Prometheus: prom, Queries: []string{counter, gauge, "vector(0)/0"},
		Windows: windows, Window: window, Interval: step, End: end, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capture.EncodeJSON(c); err != nil {
		t.Fatalf("capture.json: %v", err)
	}
	start := end.Add(-windows * window)
	ends := func(expr string) map[int64]float64 { return promValues(t, prom, expr, start.Add(window), end, window) }
	checks := []struct {
		query, field, expr string
		get                func(capture.MetricWindow) float64
	}{
		{counter, "start", counter + " offset 2s", func(w capture.MetricWindow) float64 { return w.Start }},
		{counter, "end", counter, func(w capture.MetricWindow) float64 { return w.End }},
		{counter, "delta", counter + " - " + counter + " offset 2s", func(w capture.MetricWindow) float64 { return w.Delta }},
		{counter, "rate", "(" + counter + " - " + counter + " offset 2s) / 2", func(w capture.MetricWindow) float64 { return deref(w.Rate) }},
		{gauge, "mean", "avg_over_time((" + gauge + ")[2500ms:1s])", func(w capture.MetricWindow) float64 { return deref(w.Mean) }},
		{gauge, "max", "max_over_time((" + gauge + ")[2500ms:1s])", func(w capture.MetricWindow) float64 { return deref(w.Max) }},
	}
	compared := 0
	for _, ck := range checks {
		m := metricOf(t, c, ck.query)
		want := ends(ck.expr)
		for w, mw := range m.Windows {
			at := start.Add(time.Duration(w+1) * window).Unix()
			exp, ok := want[at]
			if mw.Missing || !ok {
				t.Errorf("%s window %d: missing in capture (%v) or in Prometheus (%v)", ck.query, w, mw.Missing, !ok)
				continue
			}
			if got := ck.get(mw); math.Abs(got-exp) > 1e-9*math.Max(1, math.Abs(exp)) {
				t.Errorf("%s window %d %s: capture %v, Prometheus (%s) %v", ck.query, w, ck.field, got, ck.expr, exp)
			}
			compared++
		}
	}
	if d := metricOf(t, c, counter).TotalDelta; d == nil || *d <= 0 {
		t.Errorf("the counter did not move (total delta %v): the comparison would hold for a dead exporter too", d)
	}
	nan := c.Targets[2]
	if nan.NonFinite != windows*int(window/step)+1 || nan.Failed != 0 {
		t.Errorf("vector(0)/0: non_finite %d, failed %d; want %d and 0", nan.NonFinite, nan.Failed, windows*int(window/step)+1)
	}
	t.Logf("%d window values equal to Prometheus's own to 1e-9", compared)
}

// firstSample waits until Prometheus holds a sample of expr and returns
// when it found it.
func firstSample(t *testing.T, prom, expr string) time.Time {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		resp, err := http.Get(prom + "/api/v1/query?" + url.Values{"query": {expr}}.Encode())
		if err != nil {
			continue
		}
		var body struct{ Data struct{ Result []any } }
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err == nil && len(body.Data.Result) > 0 {
			return time.Now()
		}
	}
	t.Fatalf("prometheus never scraped %s", expr)
	return time.Time{}
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func metricOf(t *testing.T, c *capture.Capture, query string) capture.Metric {
	t.Helper()
	for _, m := range c.Metrics {
		if m.Target == "query "+query {
			return m
		}
	}
	t.Fatalf("capture has no series for %s: %+v", query, c.Targets)
	return capture.Metric{}
}
