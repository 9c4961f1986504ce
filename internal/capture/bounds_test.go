package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// exposition serves body as a text exposition.
func exposition(t *testing.T, body func(n int64) string) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, body(n.Add(1)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestScrapeLimits(t *testing.T) {
	lim := Limits{MaxBytes: 4096, MaxLineBytes: 256, MaxSamples: 10}
	many := func(k int) string {
		var b strings.Builder
		for i := range k {
			fmt.Fprintf(&b, "m{i=\"%d\"} 1\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name, body string
		what       string // LimitError.What; "" for a kept scrape
	}{
		{"within", "# TYPE m gauge\n" + many(10), ""},
		{"body over MaxBytes", "# " + strings.Repeat("x", 200) + "\n" + strings.Repeat("# c\n", 2000), "bytes"},
		{"a line over MaxLineBytes", `m{l="` + strings.Repeat("x", 1000) + "\"} 1\n", "bytes in one line"},
		{"endless line", strings.Repeat("y", 100000), "bytes in one line"},
		{"samples over MaxSamples", many(11), "samples"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := exposition(t, func(int64) string { return tc.body })
			smp := (&Scraper{Limits: lim}).Scrape(context.Background(), srv.URL)
			var le *LimitError
			switch {
			case tc.what == "" && smp.Err != nil:
				t.Fatalf("scrape failed: %v", smp.Err)
			case tc.what != "" && (!errors.As(smp.Err, &le) || le.What != tc.what):
				t.Fatalf("err %v, want a *LimitError on %s", smp.Err, tc.what)
			}
		})
	}
}

func TestScrapeRedactsAndDropsLongKeys(t *testing.T) {
	body := "# TYPE vllm:num_requests_running gauge\n" +
		`vllm:num_requests_running{model_name="Bearer sk-secret-123456"} 1` + "\n" +
		`vllm:num_requests_running{model_name="` + strings.Repeat("m", 2000) + `"} 2` + "\n" +
		`vllm:num_requests_running{model_name="ok"} 3` + "\n"
	srv := exposition(t, func(int64) string { return body })
	smp := (&Scraper{Redact: func(s string) string { return strings.ReplaceAll(s, "sk-secret-123456", "[REDACTED]") }}).Scrape(context.Background(), srv.URL)
	if smp.Err != nil || smp.Dropped != 1 || len(smp.Series) != 2 {
		t.Fatalf("err %v, dropped %d, kept %d series; want the long key dropped and 2 kept", smp.Err, smp.Dropped, len(smp.Series))
	}
	for _, s := range smp.Series {
		if strings.Contains(s.Key(), "sk-secret") {
			t.Errorf("series %s keeps the secret", s.Key())
		}
	}
}

// TestRecorderSkipsAnOversizedScrapeAndGoesOn is attack 4 of issue 28:
// one scrape whose line would be over the bound (counted after JSON
// escaping: control characters in label values grow 6×) is skipped and
// noted, and the scrapes after it are recorded.
func TestRecorderSkipsAnOversizedScrapeAndGoesOn(t *testing.T) {
	big := func() string {
		var b strings.Builder
		b.WriteString("# TYPE vllm:x gauge\n")
		for i := range 1500 {
			fmt.Fprintf(&b, "vllm:x{i=\"%d\",l=\"%s\"} 1\n", i, strings.Repeat("\x01", 150))
		}
		return b.String()
	}()
	srv := exposition(t, func(n int64) string {
		if n == 2 {
			return big
		}
		return "# TYPE vllm:y gauge\nvllm:y 1\n"
	})
	path := filepath.Join(t.TempDir(), MetricsFile)
	res := recordFor(t, RecorderConfig{Targets: []string{srv.URL}, Path: path, Interval: 10 * time.Millisecond,
		Selector: Selector{Names: []string{"vllm:.*"}}}, func() bool {
		b, _ := os.ReadFile(path)
		return strings.Count(string(b), "\n") >= 4
	})
	b, _ := os.ReadFile(path)
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if len(l) > DefaultMaxMetricsLine {
			t.Errorf("line %d is %d bytes", i+1, len(l))
		}
	}
	if res.Lines < 4 || !strings.Contains(strings.Join(res.Notes, "\n"), "skipped") {
		t.Fatalf("result %+v: want the oversized scrape skipped and noted, and 4 later lines", res)
	}
}

// shortFile fails its second write half-way, as a full disk does.
type shortFile struct {
	strings.Builder
	writes int
}

func (f *shortFile) Write(p []byte) (int, error) {
	f.writes++
	if f.writes == 2 {
		f.Builder.Write(p[:len(p)/2])
		return len(p) / 2, errors.New("no space left on device")
	}
	return f.Builder.Write(p)
}

func (f *shortFile) Truncate(n int64) error {
	s := f.String()[:n]
	f.Reset()
	f.WriteString(s)
	return nil
}

func TestMetricsLinesCutBackOnAShortWrite(t *testing.T) {
	f := &shortFile{}
	w := &boundedLines{f: f, maxLines: 10, maxBytes: 1 << 20, maxLine: 1 << 20}
	l := MetricsLine{At: time.Unix(1, 0), Target: "t", Values: map[string]float64{"a": 1}}
	if err := w.write(l); err != nil {
		t.Fatal(err)
	}
	if err := w.write(l); err == nil {
		t.Fatal("a short write was not reported")
	}
	if got := f.String(); strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
		t.Fatalf("file after a short write: %q; want the whole first line only", got)
	}
}
