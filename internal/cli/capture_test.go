package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	out := t.TempDir()
	code, stdout, stderr := invokeCLI(t, "capture", "--target", url, "--windows", "2", "--window", "40ms",
		"--interval", "20ms", "--timeout", "30s", "--match", "demo_.*", "-o", out)
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
	if len(c.Metrics) != 1 || c.Metrics[0].TotalDelta != 20 {
		t.Errorf("metrics %+v: want demo_requests_total with total delta 20 (4 periods × 5)", c.Metrics)
	}
	if md, err := os.ReadFile(filepath.Join(out, capture.MarkdownFile)); err != nil || !strings.Contains(string(md), "demo_requests_total") {
		t.Errorf("capture.md: %v", err)
	}
}

func TestCaptureBadInput(t *testing.T) {
	dead := closedURL(t)
	out := t.TempDir()
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
		{"no out dir", []string{"capture", "--target", "http://127.0.0.1:1/", "-o", filepath.Join(out, "nope")}, ExitUsage, "not a directory"},
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
