package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sagebench/sagebench/internal/capture"
)

// captureExporter serves a counter that grows by 5 on every scrape.
func captureExporter(t *testing.T) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "demo_requests_total", Help: "demo"})
	reg.MustRegister(c)
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.Add(5)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func TestCaptureCommand(t *testing.T) {
	url := captureExporter(t)
	out := filepath.Join(t.TempDir(), "new", "dir") // created, as run --output-dir creates its root
	code, stdout, stderr := invokeCLI(t, "capture", "--target", url, "--windows", "2", "--window", "40ms",
		"--interval", "20ms", "--timeout", "30s", "--match", "demo_.*", "--output-dir", out)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if !strings.Contains(stdout, "1 series, 2 windows") || !strings.Contains(stderr, "window 2/2 done") {
		t.Errorf("stdout %q stderr %q: want the summary line and progress", stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, capture.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := capture.DecodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Metrics) != 1 || c.Metrics[0].TotalDelta == nil || *c.Metrics[0].TotalDelta != 20 {
		t.Errorf("metrics %+v: want demo_requests_total with total delta 20 (4 periods × 5)", c.Metrics)
	}
	if md, err := os.ReadFile(filepath.Join(out, capture.MarkdownFile)); err != nil || !strings.Contains(string(md), "demo_requests_total") {
		t.Errorf("capture.md: %v", err)
	}
}

func TestCaptureBadInput(t *testing.T) {
	dead := closedURL(t)
	out := t.TempDir()
	file := filepath.Join(out, "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no target", []string{"capture", "-o", out}, ExitUsage, "targets"},
		{"bad url", []string{"capture", "--target", "localhost:80", "-o", out}, ExitUsage, "http(s) URL"},
		{"bad matcher", []string{"capture", "--target", "http://127.0.0.1:1/", "--label", "x", "-o", out}, ExitUsage, "label matcher"},
		{"bad cap", []string{"capture", "--target", "http://127.0.0.1:1/", "--max-series", "0", "-o", out}, ExitUsage, "--max-series"},
		{"out is a file", []string{"capture", "--target", "http://127.0.0.1:1/", "-o", file}, ExitUsage, "is a file"},
		{"-o and --output-dir differ", []string{"capture", "--target", "http://127.0.0.1:1/", "-o", out, "--output-dir", file}, ExitUsage, "name different places"},
		{"every scrape fails", []string{"capture", "--target", dead, "--windows", "1", "--window", "20ms", "--interval", "10ms", "-o", out}, ExitError, "every scrape failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := invokeCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d stderr %q, want %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(out, capture.JSONFile)); err != nil {
		t.Errorf("a capture whose scrapes all failed must still write its files: %v", err)
	}
}

func TestCaptureProgress(t *testing.T) {
	ticks := []capture.Progress{{Tick: 0, Ticks: 4, Window: 0, Windows: 2}, {Tick: 1, Ticks: 4, Window: 0, Windows: 2},
		{Tick: 2, Ticks: 4, Window: 1, Windows: 2}, {Tick: 3, Ticks: 4, Window: 1, Windows: 2}, {Tick: 4, Ticks: 4, Window: 2, Windows: 2}}
	tests := []struct {
		name string
		tty  bool
		want string
	}{
		{"plain lines per window", false, "capture: window 1/2 done\ncapture: window 2/2 done\n"},
		{"live bar", true, "\rcapture [..............................] window 1/2, scrape 0/4" +
			"\rcapture [#######.......................] window 1/2, scrape 1/4" +
			"\rcapture [###############...............] window 2/2, scrape 2/4" +
			"\rcapture [######################........] window 2/2, scrape 3/4" +
			"\rcapture [##############################] window 2/2, scrape 4/4\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			p := captureProgress(&b, tt.tty)
			for _, x := range ticks {
				p(x)
			}
			if b.String() != tt.want {
				t.Errorf("got %q\nwant %q", b.String(), tt.want)
			}
		})
	}
}

// nonFiniteExporter serves a counter beside gauges that are NaN and +Inf
// and a summary without observations (NaN quantiles), as an idle
// exporter does.
func nonFiniteExporter(t *testing.T) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "demo_requests_total", Help: "demo"})
	nan := prometheus.NewGauge(prometheus.GaugeOpts{Name: "demo_ratio", Help: "0/0"})
	inf := prometheus.NewGauge(prometheus.GaugeOpts{Name: "demo_limit", Help: "1/0"})
	sum := prometheus.NewSummary(prometheus.SummaryOpts{Name: "demo_latency_seconds", Help: "idle", Objectives: map[float64]float64{0.99: 0.001}})
	reg.MustRegister(c, nan, inf, sum)
	nan.Set(math.NaN())
	inf.Set(math.Inf(1))
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.Add(5)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// promAnswering is a Prometheus API that answers a query_range of query
// with the series of answers[query] (name → the value at every step), and bad_data, as
// Prometheus does, for a query with unbalanced parentheses.
func promAnswering(t *testing.T, answers map[string]map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if q := r.Form.Get("query"); strings.Count(q, "(") != strings.Count(q, ")") {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:4: parse error: unexpected end of input"}`)
			return
		}
		start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
		step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
		var result []any
		for name, v := range answers[r.Form.Get("query")] {
			var pts [][2]any
			for i := 0; start+float64(i)*step <= end+1e-9; i++ {
				pts = append(pts, [2]any{start + float64(i)*step, v})
			}
			result = append(result, map[string]any{"metric": map[string]string{"series": name}, "values": pts})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": result}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCaptureNonFinite: NaN and ±Inf values are left out and counted,
// both files are written and the capture exits 0; a query the server
// refuses is a usage error that writes nothing.
func TestCaptureNonFinite(t *testing.T) {
	prom := promAnswering(t, map[string]map[string]string{
		"vector(0)/0": {"": "NaN"},
		"up":          {"zero_by_zero": "NaN", "up": "1", "inf": "+Inf", "minus_inf": "-Inf"}})
	for _, tc := range []struct {
		name      string
		args      []string
		series    int
		nonFinite int // per target, at least
	}{
		{"exporter", []string{"--target", nonFiniteExporter(t), "--windows", "2", "--window", "40ms", "--interval", "20ms", "--timeout", "30s"}, 4, 2 * 5},
		{"vector(0)/0 alone", []string{"--prometheus", prom, "--query", "vector(0)/0", "--windows", "2", "--window", "20s", "--interval", "10s"}, 0, 5},
		{"prometheus", []string{"--prometheus", prom, "--query", "up", "--windows", "2", "--window", "20s", "--interval", "10s"}, 1, 3 * 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := invokeCLI(t, append(append([]string{"capture"}, tc.args...), "-o", out)...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %s", code, stderr)
			}
			b, err := os.ReadFile(filepath.Join(out, capture.JSONFile))
			if err != nil {
				t.Fatal(err)
			}
			c, err := capture.DecodeJSON(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Targets[0].NonFinite; got < tc.nonFinite || (tc.nonFinite > 0 && got == 0) {
				t.Errorf("non_finite %d, want at least %d", got, tc.nonFinite)
			}
			if tc.name == "vector(0)/0 alone" && (c.Targets[0].NonFinite != 5 || c.Targets[0].Failed != 0) {
				t.Errorf("non_finite %d, failed %d; want 5 (one NaN at each of 5 steps), 0 failed", c.Targets[0].NonFinite, c.Targets[0].Failed)
			}
			if len(c.Metrics) != tc.series && tc.name != "exporter" || tc.name == "exporter" && len(c.Metrics) < 2 {
				t.Errorf("%d series kept, want %d: %s", len(c.Metrics), tc.series, stdout)
			}
			md, err := os.ReadFile(filepath.Join(out, capture.MarkdownFile))
			if err != nil || !strings.Contains(string(md), "NaN/±Inf left out") {
				t.Errorf("capture.md: %v\n%s", err, md)
			}
		})
	}
	out := t.TempDir()
	code, _, stderr := invokeCLI(t, "capture", "--prometheus", prom, "--query", "up", "--query", "rate(x[1m]", "--windows", "1", "--window", "20s", "-o", out)
	if code != ExitUsage || !strings.Contains(stderr, `query "rate(x[1m]"`) || !strings.Contains(stderr, "parse error") || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
		t.Errorf("a PromQL syntax error: exit %d, stderr %q; want 2 naming the query and the parser's message", code, stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a refused query left %v", entries)
	}
}

// TestCaptureWritesNoCredential (issue 41, holes 1–2): in both modes, a
// URL password given on the command line and credential labels an
// exporter or a Prometheus server answers — by name (password, api_key,
// …) or by content (Bearer, URL passwords) — reach neither capture.json,
// capture.md, stdout nor stderr.
func TestCaptureWritesNoCredential(t *testing.T) {
	labels := `authorization="Bearer sk-live-abcdef123456",instance="http://bob:hunter2pw@db:5432",password="pw-plain-1",api_key="key-plain-2",Client_Secret="sec-plain-3"`
	exp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE db_up gauge\ndb_up{%s} 1\n", labels)
	}))
	t.Cleanup(exp.Close)
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"db_up","authorization":"Bearer sk-live-abcdef123456","instance":"http://bob:hunter2pw@db:5432","password":"pw-plain-1","api_key":"key-plain-2","Client_Secret":"sec-plain-3"},"values":[[%g,"1"],[%g,"1"],[%g,"1"]]}]}}`,
			start, start+10, start+20)
	}))
	t.Cleanup(prom.Close)
	withPW := func(u string) string { return strings.Replace(u, "http://", "http://alice:S3CRETPW@", 1) }
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"exporter", []string{"--target", withPW(exp.URL) + "/metrics", "--windows", "1", "--window", "40ms", "--interval", "20ms", "--timeout", "30s"}},
		{"prometheus", []string{"--prometheus", withPW(prom.URL), "--query", "db_up", "--windows", "1", "--window", "20s", "--interval", "10s"}},
		{"prometheus down", []string{"--prometheus", "http://alice:S3CRETPW@127.0.0.1:1", "--query", "db_up", "--windows", "1", "--window", "20s", "--interval", "10s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := invokeCLI(t, append(append([]string{"capture"}, tc.args...), "-o", out)...)
			js, _ := os.ReadFile(filepath.Join(out, capture.JSONFile))
			md, _ := os.ReadFile(filepath.Join(out, capture.MarkdownFile))
			if len(js) == 0 || len(md) == 0 {
				t.Fatalf("exit %d, stderr %s: no capture written", code, stderr)
			}
			all := string(js) + string(md) + stdout + stderr
			for _, secret := range []string{"S3CRETPW", "sk-live-abcdef123456", "hunter2pw", "pw-plain-1", "key-plain-2", "sec-plain-3"} {
				if strings.Contains(all, secret) {
					t.Errorf("%q written or printed (exit %d):\n%s", secret, code, all)
				}
			}
		})
	}
}
