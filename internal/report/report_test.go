package report

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/chart"
)

func fixedNow() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }

func runDir(id string) string { return filepath.Join("testdata", "runs", id) }

func build(t *testing.T, dirs ...string) *Report {
	t.Helper()
	rep, err := Build(Config{Dirs: dirs, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func buildHTML(t *testing.T, dirs ...string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := build(t, dirs...).WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// quickCache holds the report and page of each fixture set, built once
// for every test that reads them.
var quickCache struct {
	sync.Mutex
	reps  map[string]*Report
	pages map[string]string
}

// quickReport builds (once) the report of fixture set ("q1" … "compare")
// and its page.
func quickReport(t *testing.T, set string) (*Report, string) {
	t.Helper()
	quickCache.Lock()
	defer quickCache.Unlock()
	if rep, ok := quickCache.reps[set]; ok {
		return rep, quickCache.pages[set]
	}
	rep := build(t, quickRuns(t, set)...)
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if quickCache.reps == nil {
		quickCache.reps, quickCache.pages = map[string]*Report{}, map[string]string{}
	}
	quickCache.reps[set], quickCache.pages[set] = rep, buf.String()
	return rep, buf.String()
}

var figureIDRE = regexp.MustCompile(`<figure id="([^"]+)"`)

func figureIDs(html string) []string {
	var ids []string
	for _, m := range figureIDRE.FindAllStringSubmatch(html, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// TestQuickReportsLeadWithTheAnswer: the page of each Q's real quick run
// opens with the answer sentence, then the validity banner, then the
// Q's answer figure, drawn (not a "not measurable" message), before any
// other figure; the raw keys come last, folded away.
func TestQuickReportsLeadWithTheAnswer(t *testing.T) {
	for _, q := range []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"} {
		t.Run(q, func(t *testing.T) {
			rep, html := quickReport(t, q)
			ans := rep.Sections[0].Figures[0]
			if ans.ID != "answer" || len(ans.Panels) == 0 {
				t.Fatalf("first figure %s (%q): want the drawn answer figure", ans.ID, ans.Message)
			}
			ids := figureIDs(html)
			if len(ids) < 4 || ids[0] != "answer" {
				t.Fatalf("figures in page order %v: want answer first", ids)
			}
			iAnswer := strings.Index(html, `class="answer"`)
			iBanner := strings.Index(html, `class="banner`)
			iFigure := strings.Index(html, `<figure id="answer"`)
			iRaw := strings.Index(html, "scraped target metrics, raw keys")
			if !(iAnswer > 0 && iAnswer < iBanner && iBanner < iFigure && (iRaw < 0 || iRaw > iFigure)) {
				t.Errorf("page order: answer %d, banner %d, answer figure %d, raw keys %d", iAnswer, iBanner, iFigure, iRaw)
			}
			if !strings.Contains(html, template.HTMLEscapeString(rep.Runs[0].Record.Result.Answer)[:20]) {
				t.Error("the answer sentence is not on the page")
			}
			assertSelfContained(t, html)
		})
	}
}

// TestFiguresHaveNoTextCollisions lays out every figure of every quick
// report (one run, and the three runs side by side) at the page width
// and at a paper's column width, and fails on text that overlaps other
// text or leaves the figure. The browser test checks the same in
// Chromium; this one runs everywhere.
func TestFiguresHaveNoTextCollisions(t *testing.T) {
	for _, set := range []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "compare"} {
		rep, _ := quickReport(t, set)
		for _, f := range rep.AllFigures() {
			for _, p := range f.CheckText(0) {
				t.Errorf("%s: %s", set, p)
			}
		}
	}
}

func TestReportOfAResultsRoot(t *testing.T) {
	rep := build(t, quickDir)
	if len(rep.Runs) != 11 || len(rep.Sections) != 8 {
		t.Fatalf("%d runs in %d sections: want the 11 fixture runs in one section per Q", len(rep.Runs), len(rep.Sections))
	}
	for i, s := range rep.Sections {
		if id := fmt.Sprintf("s%d", i+1); s.ID != id || s.Figures[0].ID != id+"-answer" {
			t.Errorf("section %d: id %q, first figure %s: want %s and its answer first", i+1, s.ID, s.Figures[0].ID, id)
		}
		if s.Workload == "Q2" && len(s.Runs) != 4 {
			t.Errorf("Q2 section with %d runs: want its 4 quick runs side by side", len(s.Runs))
		}
	}
	var buf bytes.Buffer
	rep.WriteHTML(&buf)
	if !strings.Contains(buf.String(), "runs of different Qs or scales") {
		t.Error("a report of several Qs lacks the banner saying its sections are not comparable")
	}
	_, err := Build(Config{Dirs: []string{t.TempDir()}, Now: fixedNow})
	if !errors.Is(err, ErrNoRuns) {
		t.Errorf("an empty directory: %v, want ErrNoRuns", err)
	}
}

// TestSideBySide: three repetitions of one configuration are one
// section drawn with one column of panels per run on shared axes, and
// their comparison block holds only metrics measured by two or more.
func TestSideBySide(t *testing.T) {
	rep, _ := quickReport(t, "compare")
	if len(rep.Sections) != 1 {
		t.Fatalf("%d sections, want one", len(rep.Sections))
	}
	s := rep.Sections[0]
	ans := s.Figures[0]
	if ans.Cols != 3 || len(ans.Panels) != 6 {
		t.Errorf("answer figure %d columns, %d panels: want 3 columns of 2", ans.Cols, len(ans.Panels))
	}
	if p := ans.Panels; p[0].Y.Max != p[1].Y.Max || p[0].Y.Max != p[2].Y.Max {
		t.Errorf("the runs' panels do not share their y axis: %v %v %v", p[0].Y.Max, p[1].Y.Max, p[2].Y.Max)
	}
	c := s.Compare
	if c == nil || len(c.Sides) != 1 || len(c.Rows) == 0 {
		t.Fatalf("comparison %+v: want one configuration summarised over 3 repetitions", c)
	}
	for _, r := range c.Rows {
		if !strings.Contains(r.Cells[0], "n=") || strings.Contains(r.Cells[0], "n=1)") || strings.Contains(r.Cells[0], "e+") {
			t.Errorf("row %s: %q, want a mean ± CI over 2 or more repetitions in fixed point", r.Metric, r.Cells[0])
		}
	}
}

// TestCompareNeedsRepetitions: runs of different configurations with one
// repetition each get no statistics, and say why.
func TestCompareNeedsRepetitions(t *testing.T) {
	rep := build(t, runDir("q3-sage-r0"), runDir("q3-ray-r0"))
	c := rep.Sections[0].Compare
	if c == nil || len(c.Rows) != 0 || !strings.Contains(c.Note, "not evidence") {
		t.Errorf("comparison %+v: want none, saying single runs are not evidence", c)
	}
}

// assertSelfContained fails on anything that would make the page load a
// resource: script, external stylesheet, src or href to a URL.
func assertSelfContained(t *testing.T, html string) {
	t.Helper()
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)<script`), regexp.MustCompile(`(?i)<link`), regexp.MustCompile(`(?i)<[a-z][^>]*\ssrc=`),
		regexp.MustCompile(`(?i)href="(https?:)?//`), regexp.MustCompile(`(?i)url\(`), regexp.MustCompile(`(?i)@import`),
	} {
		if loc := bad.FindStringIndex(html); loc != nil {
			t.Errorf("page is not self-contained: %q at %d", html[loc[0]:min(len(html), loc[1]+40)], loc[0])
		}
	}
	if !strings.Contains(html, `http-equiv="Content-Security-Policy" content="default-src 'none'`) {
		t.Error("page lacks its Content-Security-Policy")
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
	os.WriteFile(filepath.Join(dir, "requests.jsonl"), []byte("not json\n"), 0o644)
	html := buildHTML(t, dir)
	if !strings.Contains(html, "run.json is missing or unreadable") || !strings.Contains(html, "not answered") {
		t.Error("a run directory without run.json must render with the reasons in the banner")
	}
}

// TestReportHTMLEscapesRunData: hostile strings in every place a run
// puts text on the page or into a figure stay text.
func TestReportHTMLEscapesRunData(t *testing.T) {
	dir := t.TempDir()
	hostile := `<script>alert(1)</script>`
	writeFakeRun(t, dir, fakeRun{id: hostile, workload: "Q3", backend: `"><img src=x>`, seed: 9, n: 20, slow: 1, valid: true, tenant: hostile, drill: true, target: hostile})
	rep := build(t, dir)
	if ans := rep.Sections[0].Figures[0]; len(ans.Panels) == 0 {
		t.Fatalf("answer figure %q: want the hostile policy drawn", ans.Message)
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	if strings.Contains(html, "<script>alert") || strings.Contains(html, "<img src=x>") {
		t.Error("run data reached the page unescaped")
	}
	if n := strings.Count(html, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 5 {
		t.Errorf("the hostile name appears escaped %d times, want it in the answer, table, figures", n)
	}
	assertSelfContained(t, html)
}

func TestWriteFigures(t *testing.T) {
	rep := build(t, runDir("q3-sage-r0"))
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "new", "dir")
			paths, err := rep.WriteFigures(out, format)
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) != len(rep.AllFigures()) || len(paths) < 5 {
				t.Fatalf("wrote %d files for %d figures", len(paths), len(rep.AllFigures()))
			}
			b, _ := os.ReadFile(paths[0])
			magic := map[string]string{"svg": "<?xml", "png": "\x89PNG", "pdf": "%PDF"}[format]
			if !bytes.HasPrefix(b, []byte(magic)) {
				t.Errorf("%s starts %q, want %q", paths[0], b[:min(8, len(b))], magic)
			}
		})
	}
	if _, err := rep.WriteFigures(t.TempDir(), "gif"); err == nil {
		t.Error("WriteFigures accepted gif")
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

func TestReportDrillEventsMarked(t *testing.T) {
	rep := build(t, runDir("q5-drill"))
	var tput *Figure
	for _, f := range rep.AllFigures() {
		if f.ID == "throughput" {
			tput = f
		}
	}
	if tput == nil {
		t.Fatal("no throughput figure")
	}
	var labels []string
	for _, e := range tput.Legend {
		labels = append(labels, e.Label)
	}
	got := strings.Join(labels, "|")
	if !strings.Contains(got, "kill llm-fast-0 at 20.0 s") || !strings.Contains(got, "restart llm-fast-0 at 40.0 s") || strings.Contains(got, "pause llm-1") {
		t.Errorf("legend %q: want the two performed events, not the one that was not", got)
	}
}

func TestReportBadEventsLine(t *testing.T) {
	dir := t.TempDir()
	writeFakeRun(t, dir, fakeRun{id: "d", workload: "Q5", backend: "sage", seed: 1, n: 20, slow: 1, valid: true})
	os.WriteFile(filepath.Join(dir, EventsFile), []byte("{\"action\":\"kill\",\"actual_ns\":1}\nnot json\n"), 0o644)
	html := buildHTML(t, dir)
	if !strings.Contains(html, "events.jsonl:2: not a line of events.jsonl") || !strings.Contains(html, `data-valid="false"`) {
		t.Error("a damaged events.jsonl must be named in the banner")
	}
}

func TestGroupDimensionsAndOrder(t *testing.T) {
	samples := []Sample{
		{OK: true, DueS: 2, Labels: Labels{Phase: "n2@12.00", Priority: "low"}},
		{OK: true, DueS: 1, Labels: Labels{Phase: "n2@6.00", Priority: "critical"}},
		{OK: true, DueS: 0, Labels: Labels{Phase: "n1@8.00", Priority: "background"}},
	}
	if got := strings.Join(groupDimensions(samples), ","); got != "phase,priority" {
		t.Errorf("dimensions %s, want phase,priority", got)
	}
	for _, tt := range []struct{ dim, want string }{
		{"phase", "n1@8.00,n2@6.00,n2@12.00"}, // numbered phases in numeric order, not as text
		{"priority", "critical,low,background"},
	} {
		names, _ := groupValues(samples, tt.dim, e2eOf)
		if got := strings.Join(names, ","); got != tt.want {
			t.Errorf("%s order %s, want %s", tt.dim, got, tt.want)
		}
	}
	q2 := []Sample{{OK: true, DueS: 0, Labels: Labels{Phase: "fifo"}}, {OK: true, DueS: 9, Labels: Labels{Phase: "priority"}}, {OK: true, DueS: 19, Labels: Labels{Phase: "fair_share"}}}
	if names, _ := groupValues(q2, "phase", e2eOf); strings.Join(names, ",") != "fifo,priority,fair_share" {
		t.Errorf("named phases %v, want the order they ran", names)
	}
}

var _ = chart.PageWidth

// TestRepeatedSeedIsNamed: two runs of one configuration with the same
// seed are one repetition, not two: the comparison leaves the second out
// of its estimates and the page says which run, by its label.
func TestRepeatedSeedIsNamed(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"q3-sage-a", "q3-sage-b", "q3-sage-c"} {
		seed := uint64(1)
		if id == "q3-sage-c" {
			seed = 2
		}
		writeFakeRun(t, filepath.Join(dir, id), fakeRun{id: id, workload: "Q3", backend: "sage", seed: seed, n: 60, slow: 1, valid: true})
	}
	page := buildHTML(t, filepath.Join(dir, "q3-sage-a"), filepath.Join(dir, "q3-sage-b"), filepath.Join(dir, "q3-sage-c"))
	_, note, _ := strings.Cut(page, "Same seed again, left out of the estimates: ")
	if note, _, _ = strings.Cut(note, "</p>"); !strings.Contains(note, "q3-sage-b") {
		t.Errorf("the page's note on the repeated seed is %q, want it to name q3-sage-b", note)
	}
}
