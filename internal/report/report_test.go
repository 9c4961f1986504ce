package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/traffic"
)

func fixedNow() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }

func runDir(id string) string { return filepath.Join("testdata", "runs", id) }

func buildHTML(t *testing.T, dirs ...string) string {
	t.Helper()
	rep, err := Build(Config{Dirs: dirs, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestReportSingleValidRun(t *testing.T) {
	html := buildHTML(t, runDir("q3-sage-r0"))
	for _, want := range []string{
		`data-valid="true"`, `id="cdf"`, `id="throughput"`, `id="p99"`, `id="groups"`, `id="metric1"`,
		"E2E latency CDF, by tenant", "gateway_queue_depth", "<summary>run_config</summary>", "Content-Security-Policy",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(html, "<svg"); n != 6 {
		t.Errorf("%d inline SVG figures, want 6 (cdf, throughput, p99, groups, 2 metrics)", n)
	}
	assertSelfContained(t, html)
}

// assertSelfContained fails on anything that would make the page load a
// resource: script, external stylesheet, src or href to a URL.
func assertSelfContained(t *testing.T, html string) {
	t.Helper()
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)<script`), regexp.MustCompile(`(?i)<link`), regexp.MustCompile(`(?i)\ssrc=`),
		regexp.MustCompile(`(?i)href="(https?:)?//`), regexp.MustCompile(`(?i)url\(`), regexp.MustCompile(`(?i)@import`),
	} {
		if loc := bad.FindStringIndex(html); loc != nil {
			t.Errorf("page is not self-contained: %q at %d", html[loc[0]:min(len(html), loc[1]+40)], loc[0])
		}
	}
}

func TestReportInvalidRunRenderedWithBanner(t *testing.T) {
	html := buildHTML(t, runDir("q3-broken"))
	for _, want := range []string{`data-valid="false"`, "INVALID run", "the run did not complete",
		"delivered rate 61% of target", "requests.jsonl:61"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestReportMissingRunJSON(t *testing.T) {
	dir := t.TempDir()
	html := buildHTML(t, dir)
	if !strings.Contains(html, "run.json is missing or unreadable") || !strings.Contains(html, "requests.jsonl is missing") {
		t.Error("a run directory without files must render with the reasons in the banner")
	}
}

func TestReportComparison(t *testing.T) {
	html := buildHTML(t, runDir("q3-sage-r0"), runDir("q3-ray-r0"), runDir("q3-broken"))
	for _, want := range []string{`id="compare-cdf"`, `id="compare-frontier"`, `id="run2-cdf"`, "q3-broken (invalid)", "compare statistics"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	assertSelfContained(t, html)
}

func TestReportHTMLEscapesRunData(t *testing.T) {
	dir := t.TempDir()
	writeFakeRun(t, dir, fakeRun{id: `<script>alert(1)</script>`, workload: "Q3", backend: `"><img src=x>`, seed: 9, n: 20, slow: 1, valid: true})
	html := buildHTML(t, dir)
	if strings.Contains(html, "<script>alert") || strings.Contains(html, "<img src=x>") {
		t.Error("run data reached the page unescaped")
	}
}

func TestWriteFigures(t *testing.T) {
	rep, err := Build(Config{Dirs: []string{runDir("q3-sage-r0"), runDir("q3-ray-r0")}, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			out := t.TempDir()
			paths, err := rep.WriteFigures(out, format)
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) != len(rep.AllFigures()) || len(paths) < 10 {
				t.Fatalf("wrote %d files for %d figures", len(paths), len(rep.AllFigures()))
			}
			b, _ := os.ReadFile(paths[0])
			magic := map[string]string{"svg": "<?xml", "png": "\x89PNG"}[format]
			if !bytes.HasPrefix(b, []byte(magic)) {
				t.Errorf("%s starts %q, want %q", paths[0], b[:min(8, len(b))], magic)
			}
		})
	}
	if _, err := rep.WriteFigures(t.TempDir(), "pdf"); err == nil {
		t.Error("WriteFigures accepted pdf")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{}, {Dirs: []string{"testdata/does-not-exist"}}} {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) accepted", c)
		}
	}
}

// TestPageWeightBounded draws a long busy run (20k requests over 10
// minutes, 8 tenants, 3 recorded series): the page must stay under the
// 2 MB bound, as every figure has a bounded number of points.
func TestPageWeightBounded(t *testing.T) {
	dir := t.TempDir()
	writeFakeRun(t, dir, fakeRun{id: "big", workload: "Q2", backend: "sage", seed: 5, n: 20000, slow: 1, valid: true})
	html := buildHTML(t, dir)
	if len(html) > maxPageBytes {
		t.Errorf("page weighs %d bytes, more than %d", len(html), maxPageBytes)
	}
	t.Logf("page weight for 20k requests: %d bytes", len(html))
}

func TestLogTicks(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(3, 300) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "5 10 20 50 100 200" {
		t.Errorf("labels %q, want 5 10 20 50 100 200", got)
	}
	if (logTicks{}).Ticks(0, 10) != nil {
		t.Error("a range from 0 has no log ticks")
	}
}

func TestReportDrillEventsMarked(t *testing.T) {
	html := buildHTML(t, runDir("q5-drill"))
	// Both time-series figures carry the two performed events, not the third.
	if n := strings.Count(html, "kill llm-fast-0"); n != 2 {
		t.Errorf("%d marks of the kill, want 2 (throughput and p99 figures)", n)
	}
	if strings.Contains(html, "pause llm-1") {
		t.Error("an event that was not performed is marked")
	}
	if !strings.Contains(html, "dashed purple lines mark the drill events") {
		t.Error("captions do not explain the event marks")
	}
}

func TestReportBadEventsLine(t *testing.T) {
	dir := t.TempDir()
	writeFakeRun(t, dir, fakeRun{id: "d", workload: "Q5", backend: "sage", seed: 1, n: 20, slow: 1, valid: true})
	os.WriteFile(filepath.Join(dir, EventsFile), []byte("{\"action\":\"kill\",\"actual_ns\":1}\nnot json\n"), 0o644)
	html := buildHTML(t, dir)
	if !strings.Contains(html, "events.jsonl:2: not a drill event") || !strings.Contains(html, `data-valid="false"`) {
		t.Error("a damaged events.jsonl must be named in the banner")
	}
}

func TestCDFPerVaryingLabel(t *testing.T) {
	tests := []struct {
		name    string
		samples []Sample
		dims    []string
		ids     []string
	}{
		{"nothing varies", []Sample{{OK: true, E2EMs: 5, Labels: Labels{Type: "llm"}}, {OK: true, E2EMs: 7, Labels: Labels{Type: "llm"}}}, nil, []string{"cdf"}},
		{"tenant and type", []Sample{
			{OK: true, E2EMs: 5, Labels: Labels{Type: "llm", Tenant: "a"}},
			{OK: true, E2EMs: 9, Labels: Labels{Type: "embedding", Tenant: "b"}},
			{OK: true, E2EMs: 7, Labels: Labels{Type: "llm", Tenant: "b"}},
		}, []string{"tenant", "type"}, []string{"cdf", "cdf-type"}},
		{"phase first", []Sample{{Labels: Labels{Phase: "fifo", Priority: "high"}}, {Labels: Labels{Phase: "hybrid", Priority: "low"}}}, []string{"phase", "priority"}, []string{"cdf", "cdf-priority"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := groupDimensions(tt.samples); strings.Join(got, ",") != strings.Join(tt.dims, ",") {
				t.Errorf("dimensions %v, want %v", got, tt.dims)
			}
			figs, err := cdfFigures(&Run{Samples: tt.samples}, "")
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, f := range figs {
				ids = append(ids, f.ID)
				if _, err := f.Render("svg"); err != nil {
					t.Error(err)
				}
			}
			if strings.Join(ids, ",") != strings.Join(tt.ids, ",") {
				t.Errorf("figures %v, want %v", ids, tt.ids)
			}
		})
	}
}

func TestScaleFrontierFigure(t *testing.T) {
	rate := result.Def{Name: "max_rate", Unit: result.ReqPerS, Direction: result.Higher}
	res := result.New("frontier", rate.Within(30, 32, 5, ""),
		result.Def{Name: "engines=1.max_rate", Unit: result.ReqPerS, Direction: result.Higher}.Within(10, 11, 5, ""),
		result.Def{Name: "engines=2.max_rate", Unit: result.ReqPerS, Direction: result.Higher}.Within(18, 20, 5, ""),
		result.Def{Name: "engines=4.max_rate", Unit: result.ReqPerS, Direction: result.Higher}.Within(30, math.Inf(1), 5, ""),
		result.Def{Name: "engines=2.goodput", Unit: result.ReqPerS, Direction: result.Higher}.Measure(17, 5, ""))
	r := &Run{Record: &record.Run{Result: &res}}
	f, err := scaleFrontierFigure(r, "")
	if err != nil || f == nil || f.ID != "frontier" {
		t.Fatalf("figure %v, %v: want the frontier", f, err)
	}
	svg, err := f.Render("svg")
	if err != nil || !bytes.Contains(svg, []byte("ideal (n × rate at 1 engine)")) {
		t.Errorf("frontier SVG (%v) lacks the ideal line", err)
	}
	if f, _ := scaleFrontierFigure(&Run{Record: &record.Run{}}, ""); f != nil {
		t.Error("a run without Q4 extras got a frontier figure")
	}
}

func TestReportSkipsAggregateDirs(t *testing.T) {
	agg := t.TempDir()
	os.WriteFile(filepath.Join(agg, "aggregate.json"), []byte("{}"), 0o644)
	rep, err := Build(Config{Dirs: []string{runDir("q3-sage-r0"), agg}, Now: fixedNow})
	if err != nil || len(rep.Runs) != 1 || len(rep.Skipped) != 1 {
		t.Fatalf("Build: %v; want one run and the aggregate skipped", err)
	}
	if _, err := Build(Config{Dirs: []string{agg}, Now: fixedNow}); err == nil {
		t.Error("a report of aggregates only was accepted")
	}
}

func TestTurnFigure(t *testing.T) {
	r := &Run{Record: &record.Run{}, Turns: []traffic.TurnStat{
		{Turn: 1, Count: 3, TTFT: record.Latency{P50: 40, P99: 50}, ITL: record.Latency{P50: 6}},
		{Turn: 2, Count: 3, TTFT: record.Latency{P50: 70, P99: 80}, ITL: record.Latency{P50: 6}}}}
	f, err := turnFigure(r, "")
	if err != nil || f == nil || f.ID != "turns" {
		t.Fatalf("figure %v, %v: want the turns", f, err)
	}
	if svg, err := f.Render("svg"); err != nil || !bytes.Contains(svg, []byte("TTFT p99")) {
		t.Errorf("turns SVG (%v) lacks its lines", err)
	}
	if f, _ := turnFigure(&Run{Record: &record.Run{}}, ""); f != nil {
		t.Error("a run without sessions got a turns figure")
	}
}
