package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// maxPageBytes is the page weight bound of the issue (a Q2 full run).
const maxPageBytes = 2 << 20

// chromiumOrSkip finds Debian's chromium and the Liberation fonts the
// figures name. Without them the test is skipped with the install line,
// unless SAGEBENCH_REQUIRE_CHROMIUM is set (CI sets it after installing
// both), where their absence fails.
func chromiumOrSkip(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err == nil {
		out, ferr := exec.Command("fc-list", ":family=Liberation Sans").Output()
		if ferr != nil || len(bytes.TrimSpace(out)) == 0 {
			err = fmt.Errorf("the Liberation Sans font is not installed")
		}
	}
	if err != nil {
		if os.Getenv("SAGEBENCH_REQUIRE_CHROMIUM") != "" {
			t.Fatalf("SAGEBENCH_REQUIRE_CHROMIUM is set but %v", err)
		}
		t.Skipf("%v (apt-get install -y chromium fonts-liberation): the browser test of the HTML report is skipped", err)
	}
	return bin
}

// headless runs chromium on a file with no way out: every host resolves
// to nothing and every connection goes to a refused loopback proxy, so
// even the browser's own background requests stay on the machine.
func headless(t *testing.T, bin string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-quic",
		"--user-data-dir=" + t.TempDir(), "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
		"--proxy-server=127.0.0.1:1", "--host-resolver-rules=MAP * ~NOTFOUND",
		"--enable-logging=stderr", "--v=0"}
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--force-device-scale-factor") }) {
		base = append(base, "--force-device-scale-factor=1")
	}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

var (
	figureRE  = regexp.MustCompile(`(?s)<figure id="([^"]+)" class="figure">.*?(<svg.*?</svg>)\s*</figure>`)
	consoleRE = regexp.MustCompile(`(?m)^.*:CONSOLE.*$`)
	// A request made by the page has the file's opaque origin as initiator.
	pageRequestRE = regexp.MustCompile(`"initiator":"(null|file:[^"]*)"`)
)

// TestReportInChromium loads the report of each Q's quick run, of
// three runs side by side and of 2, 5 and 8 runs side by side in
// Chromium: the pages make no request and
// log nothing, every figure is in the DOM Chromium built, and in every
// figure no text element overlaps another or is clipped by the
// figure's edge, and none is blank.
func TestReportInChromium(t *testing.T) {
	bin := chromiumOrSkip(t)
	dir := t.TempDir()
	var figs []harnessFigure
	// One page of two sections (a drill and three runs side by side)
	// holds every kind of figure and element the pages have.
	assertLoadsNothing(t, bin, dir, "q8+compare", buildHTML(t, append(quickRuns(t, "q8"), quickRuns(t, "compare")...)...))
	for _, set := range []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "compare"} {
		_, page := quickReport(t, set)
		if len(page) > maxPageBytes {
			t.Errorf("%s: page weighs %d bytes, more than %d", set, len(page), maxPageBytes)
		}
		for _, m := range figureRE.FindAllStringSubmatch(page, -1) {
			figs = append(figs, harnessFigure{ID: set + "/" + m[1], SVG: m[2]})
		}
	}
	if len(figs) < 9*6 {
		t.Fatalf("%d figures in the 9 reports, want at least 6 each", len(figs))
	}
	// 2, 5 and 8 runs side by side: beyond what fits, small multiples
	for _, n := range []int{2, 5, 8} {
		page := buildHTML(t, runsOf(t, n)...)
		for _, m := range figureRE.FindAllStringSubmatch(page, -1) {
			figs = append(figs, harnessFigure{ID: fmt.Sprintf("%d-runs/%s", n, m[1]), SVG: m[2]})
		}
	}
	for _, h := range harnessPages(figs) {
		checkFigures(t, bin, dir, h)
	}
	// The checks themselves must be able to fail.
	bad := harnessFigure{ID: "self-test", SVG: `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="100" viewBox="0 0 300 100">` +
		`<text x="10" y="50" font-size="14">overlapping</text><text x="20" y="52" font-size="14">text</text><text x="280" y="90" font-size="14">clipped</text></svg>`}
	boxes, ink := measure(t, bin, dir, harnessPages([]harnessFigure{bad})[0])
	if p := textProblems(boxes[0]); len(p) != 2 || ink[0] > 0.05 {
		t.Errorf("self-test: problems %q, ink %.3f: want one overlap, one clipped text and little ink", p, ink[0])
	}
}

// assertLoadsNothing loads the page: no console message, no request,
// every figure in the DOM.
func assertLoadsNothing(t *testing.T, bin, dir, name, page string) {
	t.Helper()
	file := filepath.Join(dir, name+".html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	netlog := filepath.Join(dir, name+"-netlog.json")
	dom, stderr := headless(t, bin, "--log-net-log="+netlog, "--dump-dom", "file://"+file)
	if msgs := consoleRE.FindAllString(stderr, -1); len(msgs) > 0 {
		t.Errorf("%s: console messages while loading the page:\n%s", name, strings.Join(msgs, "\n"))
	}
	if nl, err := os.ReadFile(netlog); err != nil {
		t.Errorf("%s: no net log: %v", name, err)
	} else if m := pageRequestRE.Find(nl); m != nil {
		t.Errorf("%s: the page made a network request (%s in the net log)", name, m)
	}
	for _, f := range figureRE.FindAllStringSubmatch(page, -1) {
		if !strings.Contains(dom, `id="`+f[1]+`"`) {
			t.Errorf("%s: figure %s is not in the DOM chromium built", name, f[1])
		}
	}
}

// harnessFigure is one figure to measure.
type harnessFigure struct{ ID, SVG string }

// harnessPage lays figures out at their natural size in one column (the
// test's own page, with a script: the report has none).
type harnessPage struct {
	Figures []harnessFigure
	Height  int
}

// harnessWidth is the harness page's width in CSS px (a 7 in figure is
// 672 px).
const harnessWidth = 720

// harnessPages packs figures into pages under 16,000 px (Chromium's
// largest screenshot).
func harnessPages(figs []harnessFigure) []harnessPage {
	var pages []harnessPage
	for _, f := range figs {
		h := svgHeightPx(f.SVG) + 10
		if len(pages) == 0 || pages[len(pages)-1].Height+h > 16000 {
			pages = append(pages, harnessPage{})
		}
		p := &pages[len(pages)-1]
		p.Figures, p.Height = append(p.Figures, f), p.Height+h
	}
	return pages
}

var svgHeightRE = regexp.MustCompile(`<svg[^>]*\sheight="([0-9.]+)(pt|px)?"`)

func svgHeightPx(svg string) int {
	m := svgHeightRE.FindStringSubmatch(svg)
	if m == nil {
		return 400
	}
	var v float64
	fmt.Sscan(m[1], &v)
	if m[2] == "pt" {
		v *= 4.0 / 3
	}
	return int(v) + 2
}

const harnessScript = `<script>
const out = [];
for (const fig of document.querySelectorAll('.fig')) {
  const svg = fig.querySelector('svg');
  const sb = svg.getBoundingClientRect();
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim() !== '').map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, x0: r.left - sb.left, y0: r.top - sb.top, x1: r.right - sb.left, y1: r.bottom - sb.top};
  });
  out.push({id: fig.id, left: sb.left, top: sb.top, w: sb.width, h: sb.height, texts});
}
document.getElementById('out').textContent = JSON.stringify(out);
</script>`

// figureBoxes is what the harness measured of one figure, in CSS px.
type figureBoxes struct {
	ID    string  `json:"id"`
	Left  float64 `json:"left"`
	Top   float64 `json:"top"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
	Texts []struct {
		Text string  `json:"text"`
		X0   float64 `json:"x0"`
		Y0   float64 `json:"y0"`
		X1   float64 `json:"x1"`
		Y1   float64 `json:"y1"`
	} `json:"texts"`
}

// measure loads a harness page once: the text boxes of every figure
// (from the DOM the script wrote) and each figure's ink (the fraction of
// its pixels that are not white, from a screenshot of the same load).
func measure(t *testing.T, bin, dir string, h harnessPage) ([]figureBoxes, []float64) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0;background:#fff}.fig{display:block;margin:0 0 8px 0;line-height:0}</style></head><body>`)
	for i, f := range h.Figures {
		fmt.Fprintf(&b, `<div class="fig" id="f%d">%s</div>`, i, f.SVG)
	}
	b.WriteString(`<pre id="out"></pre>` + harnessScript + `</body></html>`)
	file := filepath.Join(dir, fmt.Sprintf("harness-%d.html", time.Now().UnixNano()))
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := strings.TrimSuffix(file, ".html") + ".png"
	// The screenshot at half resolution (the layout, in CSS px, is the
	// same): a quarter of the pixels to decode.
	dom, _ := headless(t, bin, fmt.Sprintf("--window-size=%d,%d", harnessWidth, h.Height+40), "--force-device-scale-factor=0.5",
		"--screenshot="+shot, "--dump-dom", "file://"+file)
	m := regexp.MustCompile(`(?s)<pre id="out">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("the harness wrote no measurements")
	}
	var boxes []figureBoxes
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &boxes); err != nil {
		t.Fatalf("harness measurements: %v", err)
	}
	img := decodePNG(t, shot)
	ink := make([]float64, len(boxes))
	for i, fb := range boxes {
		ink[i] = inkIn(img, image.Rect(int(fb.Left/2), int(fb.Top/2), int((fb.Left+fb.W)/2), int((fb.Top+fb.H)/2)))
	}
	return boxes, ink
}

// checkFigures measures a harness page and fails on each text problem
// and each blank figure.
func checkFigures(t *testing.T, bin, dir string, h harnessPage) {
	boxes, ink := measure(t, bin, dir, h)
	if len(boxes) != len(h.Figures) {
		t.Fatalf("measured %d figures of %d", len(boxes), len(h.Figures))
	}
	for i, fb := range boxes {
		id := h.Figures[i].ID
		for _, p := range textProblems(fb) {
			t.Errorf("%s: %s", id, p)
		}
		if len(fb.Texts) < 3 {
			t.Errorf("%s: %d text elements: the figure has no labels", id, len(fb.Texts))
		}
		if ink[i] < 0.01 {
			t.Errorf("%s looks blank: %.4f of its pixels are not background", id, ink[i])
		}
	}
}

// textSlack is how many px two text boxes may share, or a box may pass
// the figure's edge, before it counts (font boxes include line gaps).
const textSlack = 1.0

// textProblems lists overlapping and clipped text of one figure.
func textProblems(fb figureBoxes) []string {
	var out []string
	for i, a := range fb.Texts {
		if a.X0 < -textSlack || a.Y0 < -textSlack || a.X1 > fb.W+textSlack || a.Y1 > fb.H+textSlack {
			out = append(out, fmt.Sprintf("%q is clipped (%.0f,%.0f–%.0f,%.0f in %.0f×%.0f px)", a.Text, a.X0, a.Y0, a.X1, a.Y1, fb.W, fb.H))
		}
		for _, b := range fb.Texts[i+1:] {
			if a.X0+textSlack < b.X1 && b.X0+textSlack < a.X1 && a.Y0+textSlack < b.Y1 && b.Y0+textSlack < a.Y1 {
				out = append(out, fmt.Sprintf("%q and %q overlap", a.Text, b.Text))
			}
		}
	}
	return out
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// inkIn is the fraction of r's pixels in img that are not white (every
// other pixel of every other row: an estimate, quick under -race).
func inkIn(img image.Image, r image.Rectangle) float64 {
	r = r.Intersect(img.Bounds())
	if r.Empty() {
		return 0
	}
	pix, stride := rgbaPix(img)
	ink, n := 0, 0
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			n++
			if pix != nil {
				i := (y-img.Bounds().Min.Y)*stride + (x-img.Bounds().Min.X)*4
				if pix[i] < 0xf0 || pix[i+1] < 0xf0 || pix[i+2] < 0xf0 {
					ink++
				}
			} else if cr, cg, cb, _ := img.At(x, y).RGBA(); cr < 0xf000 || cg < 0xf000 || cb < 0xf000 {
				ink++
			}
		}
	}
	return float64(ink) / float64(n)
}

// rgbaPix is the 8-bit RGBA pixels of img, when it holds them so.
func rgbaPix(img image.Image) ([]uint8, int) {
	switch m := img.(type) {
	case *image.NRGBA:
		return m.Pix, m.Stride
	case *image.RGBA:
		return m.Pix, m.Stride
	}
	return nil, 0
}
