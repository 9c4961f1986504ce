package paper

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/runconfig"
)

const repeated = "testdata/q2-repeated.yaml"

func make1(t *testing.T, cfg Config) *Outcome {
	t.Helper()
	o, err := Make(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestRenderRepeated pools Q2's three fixture repetitions (one invalid,
// seed 42 found twice): the summary is over the 2 valid of 3, with an
// interval, and the manifest ties each file to its runs, the invalid one
// marked excluded.
func TestRenderRepeated(t *testing.T) {
	out := t.TempDir()
	o := make1(t, Config{Experiment: repeated, Out: out})
	if len(o.Cells) != 1 || len(o.Cells[0].Runs()) != 3 || len(o.Cells[0].Missing()) != 0 {
		t.Fatalf("cells %+v: want Q2 with its 3 seeds found", o.Cells)
	}
	sum, err := os.ReadFile(filepath.Join(out, "tables", "q2-summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "| Q2 quick | 2/3 | ") || !strings.Contains(string(sum), " ± ") && !strings.Contains(string(sum), "–") {
		t.Errorf("summary:\n%s\nwant 2 valid of 3 with intervals", sum)
	}
	var m Manifest
	b, _ := os.ReadFile(filepath.Join(out, ManifestName))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 8 {
		t.Errorf("%d files in the manifest, want 4 figures (svg, pdf × column, page) and 2 tables × (tex, md)", len(m.Files))
	}
	for _, f := range m.Files {
		if len(f.Runs) != 3 || len(f.Excluded) != 1 || len(f.ConfigHashes) != 1 || len(f.SHA256) != 64 || len(f.Layout) != 0 {
			t.Errorf("manifest entry %+v: want 3 runs, the invalid one excluded, one config hash, no layout problem", f)
		}
	}
}

// TestRenderIsByteIdentical renders the same runs twice.
func TestRenderIsByteIdentical(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	make1(t, Config{Experiment: repeated, Out: a})
	make1(t, Config{Experiment: repeated, Out: b})
	files, _ := filepath.Glob(filepath.Join(a, "*", "*"))
	files = append(files, filepath.Join(a, ManifestName))
	if len(files) < 9 {
		t.Fatalf("%d files", len(files))
	}
	for _, f := range files {
		x, _ := os.ReadFile(f)
		y, err := os.ReadFile(filepath.Join(b, strings.TrimPrefix(f, a)))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two renderings (%v)", strings.TrimPrefix(f, a), err)
		}
	}
}

// TestMakeRunsWhatIsMissing: with an empty results root, each wanted
// seed is run once through the runner given, and rendered.
func TestMakeRunsWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "e.yaml")
	os.WriteFile(exp, []byte("results: results\noutput: paper\nruns:\n  - {q: Q2, scale: quick, seeds: [7, 9]}\n"), 0o644)
	files, _ := filepath.Glob(filepath.Join("..", "report", "testdata", "quick", "q2", "q2-sage-0-*", "run.json"))
	if len(files) != 1 {
		t.Fatalf("the Q2 quick fixture: %v", files)
	}
	src, err := record.ReadRun(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var ran []int64
	fake := func(_ context.Context, r runconfig.Resolved) error {
		ran = append(ran, r.Shared.Seed)
		run := *src
		run.RunID, run.Seed, run.RunConfig = "fake-"+string(rune('a'+len(ran))), r.Shared.Seed, r.RunConfig
		d := filepath.Join(r.Shared.OutputDir, "q2", run.RunID)
		os.MkdirAll(d, 0o755)
		b, _ := json.Marshal(run)
		return os.WriteFile(filepath.Join(d, "run.json"), b, 0o644)
	}
	o := make1(t, Config{Experiment: exp, Run: fake})
	if len(ran) != 2 || ran[0] != 7 || ran[1] != 9 || len(o.Ran) != 2 {
		t.Fatalf("ran seeds %v (%v): want 7 and 9 once each", ran, o.Ran)
	}
	if _, err := os.Stat(filepath.Join(dir, "paper", "figures", "q2-answer-page.svg")); err != nil {
		t.Error(err)
	}
	ran = nil
	make1(t, Config{Experiment: exp, Run: fake})
	if len(ran) != 0 {
		t.Errorf("a second make ran %v again: the runs exist", ran)
	}
}

func TestLoadRefusesBadExperiments(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"no runs", "name: x\n", "runs: none"},
		{"unknown key", "runs: [{q: Q2, scael: quick}]\n", "scael"},
		{"unknown Q", "runs: [{q: Q11}]\n", "q:"},
		{"bad scale", "runs: [{q: Q2, scale: huge}]\n", "scale"},
		{"bad backend", "runs: [{q: Q2, backends: [vllm]}]\n", "backends"},
		{"bad repeat", "runs: [{q: Q2, repeat: -1}]\n", "repeat"},
		{"bad format", "figures: {formats: [gif]}\nruns: [{q: Q2}]\n", "figures.formats"},
		{"bad width", "figures: {widths: [poster]}\nruns: [{q: Q2}]\n", "figures.widths"},
		{"bad confidence", "confidence: 1.5\nruns: [{q: Q2}]\n", "confidence"},
		{"too many runs", "runs: [{q: Q2, seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], repeat: 100}]\n", "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "e.yaml")
			os.WriteFile(p, []byte(tt.yaml), 0o644)
			if _, err := Load(p); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load = %v, want an error naming %q", err, tt.want)
			}
		})
	}
}

func TestLaTeXEscapes(t *testing.T) {
	tab := Table{Label: "x_y", Caption: `50 % of $cost & #1 {a}_b ~ ^ \ ± –`, Columns: []string{"a_b", "c"}, Numeric: []bool{false, true},
		Rows: [][]string{{`\input{/etc/passwd}`, "829 ± 290 ms"}}}
	got := tab.LaTeX()
	for _, want := range []string{`50 \% of \$cost \& \#1 \{a\}\_b \~{} \^{} \textbackslash{} $\pm$ --`, `\textbackslash{}input\{/etc/passwd\}`, `829 $\pm$ 290 ms \\`, `\label{tab:x\_y}`, `\toprule`, `\bottomrule`} {
		if !strings.Contains(got, want) {
			t.Errorf("LaTeX lacks %q:\n%s", want, got)
		}
	}
	if md := tab.Markdown(); !strings.Contains(md, "| a_b | c |") || !strings.Contains(md, "---:|") {
		t.Errorf("Markdown:\n%s", md)
	}
}

// FuzzExperiment: no experiment file makes Load panic.
func FuzzExperiment(f *testing.F) {
	seed, _ := os.ReadFile(repeated)
	f.Add(seed)
	f.Add([]byte("runs: [{q: Q2, seeds: [1], repeat: 3, backends: [sage, ray]}]\nfigures: {formats: [svg]}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "e.yaml")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		Load(p)
	})
}
