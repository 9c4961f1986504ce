package paper

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// maxOverfullPt is the widest overfull box a paper's table or figure may
// make.
const maxOverfullPt = 5.0

var overfullRE = regexp.MustCompile(`Overfull \\hbox \(([0-9.]+)pt too wide\)`)

// pdflatexOrSkip finds Debian's pdflatex (texlive-latex-recommended);
// SAGEBENCH_REQUIRE_LATEX=1 (set by .ci/run) makes its absence a failure.
func pdflatexOrSkip(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("pdflatex")
	if err != nil {
		if os.Getenv("SAGEBENCH_REQUIRE_LATEX") == "1" {
			t.Fatalf("pdflatex: %v (SAGEBENCH_REQUIRE_LATEX=1)", err)
		}
		t.Skipf("%v (apt-get install texlive-latex-recommended): the LaTeX compile test is skipped", err)
	}
	return bin
}

// TestQuickFixturesCompileInLaTeX renders the paper of the quick fixture
// runs and compiles every table and figure in a two-column document
// (241 pt columns, 506 pt text, as the ACM and IEEE templates): it must
// compile, and no box may be overfull by more than 5 pt.
func TestQuickFixturesCompileInLaTeX(t *testing.T) {
	bin := pdflatexOrSkip(t)
	out := t.TempDir()
	_, err := Make(context.Background(), Config{Experiment: filepath.Join("..", "..", "config", "paper", "sagebench.yaml"),
		From: filepath.Join("..", "report", "testdata", "quick"), Out: out, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	doc := latexDocument(t, out)
	if err := os.WriteFile(filepath.Join(out, "main.tex"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-interaction=nonstopmode", "-halt-on-error", "main.tex")
	cmd.Dir = out
	b, err := cmd.CombinedOutput()
	log, _ := os.ReadFile(filepath.Join(out, "main.log"))
	if err != nil {
		t.Fatalf("pdflatex: %v\n%s", err, tail(string(b), 3000))
	}
	for _, p := range overfull(string(log)) {
		t.Error(p)
	}
}

// overfull lists the boxes of a LaTeX log overfull by more than
// maxOverfullPt, each with the log line after it (the offending text).
func overfull(log string) []string {
	var out []string
	for _, m := range overfullRE.FindAllStringSubmatchIndex(log, -1) {
		pt, _ := strconv.ParseFloat(log[m[2]:m[3]], 64)
		if pt > maxOverfullPt {
			end := min(len(log), m[1]+200)
			out = append(out, fmt.Sprintf("overfull box %.1f pt: %s", pt, strings.TrimSpace(log[m[0]:end])))
		}
	}
	return out
}

// TestOverfullCatchesWideBoxes: the log check fails on a box 6 pt too
// wide and passes one 4 pt too wide.
func TestOverfullCatchesWideBoxes(t *testing.T) {
	log := "Overfull \\hbox (4.0pt too wide) in alignment at lines 1--2\n[]\nOverfull \\hbox (61.2pt too wide) in alignment at lines 9--12\n"
	if got := overfull(log); len(got) != 1 || !strings.Contains(got[0], "61.2 pt") {
		t.Errorf("overfull %q: want the 61.2 pt box only", got)
	}
}

// latexDocument inputs every table of out and includes every figure (a
// column figure at \columnwidth, a page figure at \textwidth).
func latexDocument(t *testing.T, out string) string {
	tables, _ := filepath.Glob(filepath.Join(out, "tables", "*.tex"))
	figs, _ := filepath.Glob(filepath.Join(out, "figures", "*.pdf"))
	if len(tables) < 8 || len(figs) < 8 {
		t.Fatalf("%d tables and %d figures: want every Q's", len(tables), len(figs))
	}
	sort.Strings(tables)
	sort.Strings(figs)
	var b strings.Builder
	b.WriteString("\\documentclass[twocolumn,10pt]{article}\n\\usepackage{booktabs,array,graphicx}\n")
	b.WriteString("\\setlength{\\textwidth}{506pt}\\setlength{\\columnsep}{24pt}\\setlength{\\oddsidemargin}{-25pt}\\setlength{\\textheight}{650pt}\\setlength{\\topmargin}{-40pt}\n")
	b.WriteString("\\begin{document}\n")
	for _, f := range tables {
		rel, _ := filepath.Rel(out, f)
		fmt.Fprintf(&b, "\\input{%s}\n\\clearpage\n", filepath.ToSlash(rel))
	}
	for _, f := range figs {
		rel, _ := filepath.Rel(out, f)
		env, width := "figure", "\\columnwidth"
		if strings.Contains(rel, "-page") {
			env, width = "figure*", "\\textwidth"
		}
		fmt.Fprintf(&b, "\\begin{%s}[t]\\centering\\includegraphics[width=%s]{%s}\\caption{%s}\\end{%s}\n\\clearpage\n",
			env, width, filepath.ToSlash(rel), texEscape(filepath.Base(rel)), env)
	}
	b.WriteString("\\end{document}\n")
	return b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
