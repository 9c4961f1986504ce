package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gateBench renders n runs of benchmarks Encode and Decode at ns ns/op
// (plus a small spread) in Go benchmark format.
func gateBench(ns float64, n int) string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: example.com/codec\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "BenchmarkEncode-2 \t1000\t%.1f ns/op\nBenchmarkDecode-2 \t1000\t%.1f ns/op\n", ns+float64(i), ns*2+float64(i))
	}
	return b.String() + "PASS\nok  \texample.com/codec\t1.2s\n"
}

func TestGateCommand(t *testing.T) {
	base := compareTempFile(t, "base.txt", gateBench(1000, 10))
	same := compareTempFile(t, "same.txt", gateBench(1001, 10))
	slow := compareTempFile(t, "slow.txt", gateBench(1100, 10))
	few := compareTempFile(t, "few.txt", gateBench(1000, 4))
	few2 := compareTempFile(t, "few2.txt", gateBench(1200, 4))
	empty := compareTempFile(t, "empty.txt", "")
	policy := compareTempFile(t, "gate.yaml", "alpha: 0.05\ngeomean: {threshold_pct: 20}\n")
	badPolicy := compareTempFile(t, "bad.yaml", "alpah: 0.05\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"pass", []string{"gate", base, same}, ExitOK, "verdict: pass", ""},
		{"regression", []string{"gate", base, slow}, ExitRegression, "REGRESSION   geomean", ""},
		{"threshold flag", []string{"gate", "--threshold", "15", base, slow}, ExitOK, "threshold +15.00%", ""},
		{"policy file", []string{"gate", "--policy", policy, base, slow}, ExitOK, "threshold +20.00%", ""},
		{"flag beats policy", []string{"gate", "--policy", policy, "--threshold", "5", base, slow}, ExitRegression, "threshold +5.00%", ""},
		{"missing baseline", []string{"gate", filepath.Join(t.TempDir(), "none.txt"), same}, ExitInconclusive, "read: base: reading input", ""},
		{"empty baseline", []string{"gate", empty, same}, ExitInconclusive, "holds no benchmark results", ""},
		{"too few samples", []string{"gate", few, few2}, ExitInconclusive, "need >= 5 samples per side", ""},
		{"expected symbol", []string{"gate", "--expect", "BenchmarkFedAvg", base, same}, ExitInconclusive, "BenchmarkFedAvg: expected benchmark missing", ""},
		{"expected symbol present", []string{"gate", "--expect", "BenchmarkEncode", base, same}, ExitOK, "present on both sides", ""},
		{"bad policy", []string{"gate", "--policy", badPolicy, base, same}, ExitUsage, "", "alpah"},
		{"bad alpha", []string{"gate", "--alpha", "0", base, same}, ExitUsage, "", "alpha 0 must be in (0, 1)"},
		{"NaN threshold", []string{"gate", "--threshold", "NaN", base, slow}, ExitUsage, "", "threshold_pct NaN must be finite"},
		{"infinite threshold", []string{"gate", "--threshold", "+Inf", base, slow}, ExitUsage, "", "threshold_pct +Inf must be finite"},
		{"NaN alpha", []string{"gate", "--alpha", "NaN", base, same}, ExitUsage, "", "alpha NaN must be in (0, 1)"},
		{"same file twice", []string{"gate", base, base}, ExitUsage, "", "BASE and CURRENT are the same file"},
		{"one arg without limits", []string{"gate", base}, ExitUsage, "", "CURRENT alone judges only limits and expected benchmarks"},
		{"markdown", []string{"gate", "--format", "markdown", base, slow}, ExitRegression, "**Verdict: REGRESSION**", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := invokeCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
		})
	}
}

func TestGateJSONAndReport(t *testing.T) {
	base := compareTempFile(t, "base.txt", gateBench(1000, 10))
	slow := compareTempFile(t, "slow.txt", gateBench(1100, 10))
	report := filepath.Join(t.TempDir(), "gate.md")
	code, stdout, _ := invokeCLI(t, "gate", "--format", "json", "--report", report, base, slow)
	if code != ExitRegression {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	var doc struct {
		Verdict  string `json:"verdict"`
		Findings []struct {
			Verdict, Rule, Detail string
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, stdout)
	}
	if doc.Verdict != "regression" || doc.Findings[0].Rule != "geomean" || doc.Findings[0].Verdict != "regression" {
		t.Fatalf("doc %+v", doc)
	}
	md, err := os.ReadFile(report)
	if err != nil || !strings.Contains(string(md), "**Verdict: REGRESSION**") {
		t.Fatalf("report: %v\n%s", err, md)
	}
}

// gateRunDir writes a run directory: run.json, bench.txt with 6 runs at
// ns ns/op, and requests.jsonl with the given e2e latencies.
func gateRunDir(t *testing.T, dir, id string, valid bool, ns float64, e2e []float64) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	reasons := `["schedule lag"]` // as the runner writes it: reasons exactly when invalid
	if valid {
		reasons = `[]`
	}
	run := fmt.Sprintf(`{"run_id":%q,"workload":"Q2","name":"ControlMix","backend":"sage","valid":%v,"complete":true,"invalid_reasons":%s,"summary":{"e2e":{"p99_ms":1}}}`, id, valid, reasons)
	var bench, reqs strings.Builder
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&bench, "BenchmarkQ2ControlMix/backend=sage/policy=fifo 100 %v ns/op\n", ns+float64(i))
	}
	for i, ms := range e2e {
		fmt.Fprintf(&reqs, `{"id":"r%d","kind":"request","e2e_ms":%v,"ok":true}`+"\n", i, ms)
	}
	for name, data := range map[string]string{"run.json": run, "bench.txt": bench.String(), "requests.jsonl": reqs.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGateRunDirectories(t *testing.T) {
	root := t.TempDir()
	flat := make([]float64, 100)
	tail := make([]float64, 100)
	for i := range flat {
		flat[i], tail[i] = 10, 10
	}
	for i := 95; i < 100; i++ {
		tail[i] = 400
	}
	base := gateRunDir(t, filepath.Join(root, "base", "q2-a"), "q2-sage-0-aaaaaaaa", true, 1e7, flat)
	good := gateRunDir(t, filepath.Join(root, "good", "q2-b"), "q2-sage-0-bbbbbbbb", true, 1e7, flat)
	slowTail := gateRunDir(t, filepath.Join(root, "tail", "q2-c"), "q2-sage-0-cccccccc", true, 1e7, tail)
	invalid := gateRunDir(t, filepath.Join(root, "invalid", "q2-d"), "q2-sage-0-dddddddd", false, 1e7, flat)
	limits := compareTempFile(t, "limits.yaml", "alpha: 0.05\nlimits: [{benchmark: \"Q2ControlMix/backend=sage\", max_p99_ms: 100}]\n")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"pass", []string{"gate", "--alpha", "0.05", base, good}, ExitOK, "verdict: pass"},
		{"invalid run", []string{"gate", "--alpha", "0.05", base, invalid}, ExitInconclusive, "is marked invalid: schedule lag"},
		{"real p99 limit", []string{"gate", "--policy", limits, base, slowTail}, ExitRegression, "400 ms > limit 100 ms (requests.jsonl e2e_ms, n=100)"},
		{"p99 trend", []string{"gate", "--alpha", "0.05", base, slowTail}, ExitRegression, "trend-p99    Q2ControlMix/backend=sage: 10 ms -> 400 ms"},
		{"no run.json", []string{"gate", base, filepath.Dir(compareTempFile(t, "bench.txt", "BenchmarkX 1 1 ns/op\n"))}, ExitInconclusive, "has no run.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := invokeCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.want) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
		})
	}
}

// TestGateArgsSayWhatTheyNeed: a wrong number of inputs is one line that
// says what gate takes, exit 2 (not cobra's "accepts between 1 and 2").
func TestGateArgsSayWhatTheyNeed(t *testing.T) {
	for _, args := range [][]string{{"gate"}, {"gate", "a", "b", "c"}} {
		code, _, stderr := invokeCLI(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "gate takes [BASE] CURRENT") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}
