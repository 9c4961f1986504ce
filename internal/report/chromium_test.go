package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// maxPageBytes is the page weight bound of the issue (a Q2 full run).
const maxPageBytes = 2 << 20

// chromiumOrSkip finds Debian's chromium. Without it the test is skipped
// with the install line, unless SAGEBENCH_REQUIRE_CHROMIUM is set (CI
// sets it after installing chromium), where its absence fails.
func chromiumOrSkip(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("SAGEBENCH_REQUIRE_CHROMIUM") != "" {
			t.Fatal("SAGEBENCH_REQUIRE_CHROMIUM is set but chromium is not on PATH")
		}
		t.Skip("chromium is not installed (apt-get install -y chromium): the browser test of the HTML report is skipped")
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
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
		"--proxy-server=127.0.0.1:1", "--host-resolver-rules=MAP * ~NOTFOUND",
		"--enable-logging=stderr", "--v=0"}
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

func TestReportInChromium(t *testing.T) {
	bin := chromiumOrSkip(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	html := buildHTML(t, runDir("q3-sage-r0"), runDir("q3-ray-r0"), runDir("q3-broken"))
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(html) > maxPageBytes {
		t.Errorf("page weighs %d bytes, more than %d", len(html), maxPageBytes)
	}
	netlog := filepath.Join(dir, "netlog.json")
	dom, stderr := headless(t, bin, "--log-net-log="+netlog, "--dump-dom", "file://"+page)
	if msgs := consoleRE.FindAllString(stderr, -1); len(msgs) > 0 {
		t.Errorf("console messages while loading the page:\n%s", strings.Join(msgs, "\n"))
	}
	if nl, err := os.ReadFile(netlog); err != nil {
		t.Errorf("no net log: %v", err)
	} else if m := pageRequestRE.Find(nl); m != nil {
		t.Errorf("the page made a network request (%s in the net log)", m)
	}
	figs := figureRE.FindAllStringSubmatch(html, -1)
	if len(figs) < 10 {
		t.Fatalf("%d figures in the page, want the 3 runs' figures and the comparison", len(figs))
	}
	for _, f := range figs {
		if !strings.Contains(dom, `id="`+f[1]+`"`) {
			t.Errorf("figure %s is not in the DOM chromium built", f[1])
		}
	}
	for _, f := range figs {
		t.Run(f[1], func(t *testing.T) { assertFigureDrawn(t, bin, dir, f[1], f[2]) })
	}
	// The check itself: an empty SVG must count as blank.
	if frac := inkFraction(t, bin, dir, "empty", `<svg xmlns="http://www.w3.org/2000/svg" width="700" height="300"></svg>`); frac >= 0.005 {
		t.Errorf("an empty SVG has ink fraction %.4f: the blank check cannot fail", frac)
	}
}

// assertFigureDrawn screenshots the figure's SVG alone and requires ink:
// at least 0.5% of the pixels differ from the white background.
func assertFigureDrawn(t *testing.T, bin, dir, id, svg string) {
	if frac := inkFraction(t, bin, dir, id, svg); frac < 0.005 {
		t.Errorf("figure %s looks blank: %.4f of the pixels are not background", id, frac)
	}
}

// inkFraction screenshots svg alone in chromium and returns the fraction
// of pixels that are not white.
func inkFraction(t *testing.T, bin, dir, id, svg string) float64 {
	t.Helper()
	wrapper := filepath.Join(dir, id+".html")
	doc := `<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"><style>body{margin:0;background:#fff}svg{width:1000px;height:auto}</style></head><body>` + svg + `</body></html>`
	if err := os.WriteFile(wrapper, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, id+".png")
	headless(t, bin, "--window-size=1000,700", "--screenshot="+shot, "file://"+wrapper)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	ink := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				ink++
			}
		}
	}
	return float64(ink) / float64(b.Dx()*b.Dy())
}
