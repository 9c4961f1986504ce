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
		{"one arg", []string{"gate", base}, ExitUsage, "", ""},
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
