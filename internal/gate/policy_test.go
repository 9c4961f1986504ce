package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadPolicy(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string
		check   func(t *testing.T, p Policy)
	}{
		{name: "defaults kept", yaml: "alpha: 0.05\n", check: func(t *testing.T, p Policy) {
			if p.Alpha != 0.05 || p.Geomean.ThresholdPct != 5 || p.Trend.P99Pct != 15 || p.Trend.Floors["ms"].MeanMs != 0.05 || p.Trend.Floors["ms"].BaselineMs != 0.10 {
				t.Fatalf("policy %+v", p)
			}
		}},
		{name: "full", yaml: `
alpha: 0.01
geomean: {threshold_pct: 3, units: [ns/op, B/op]}
expect: [BenchmarkFedAvg]
limits:
  - {benchmark: "regex:Q2ControlMix/.*", max_p99_ms: 250}
trend: {disabled: true}
units: {tokens: higher-is-better}
`, check: func(t *testing.T, p Policy) {
			if p.Geomean.ThresholdPct != 3 || len(p.Limits) != 1 || !p.Trend.Disabled || p.Units["tokens"] != HigherIsBetter || !p.geomeanUnit("sec/op") {
				t.Fatalf("policy %+v", p)
			}
		}},
		{name: "empty file", yaml: "# nothing but a comment\n", wantErr: "holds no settings"},
		{name: "unknown key", yaml: "alpah: 0.05\n", wantErr: "alpah"},
		{name: "input that panics the YAML decoder", yaml: "limits:\n !0\n    0: 0\n", wantErr: "malformed YAML"},
		{name: "alpha out of range", yaml: "alpha: 1.5\n", wantErr: "alpha 1.5 must be in (0, 1)"},
		{name: "limit without max", yaml: "limits: [{benchmark: X}]\n", wantErr: "limits[0]: set max_mean_ms"},
		{name: "bad regexp", yaml: "limits: [{benchmark: 'regex:(', max_p99_ms: 1}]\n", wantErr: "limits[0].benchmark"},
		{name: "a parenthesis is a name", yaml: "limits: [{benchmark: 'test_x(', max_p99_ms: 1}]\n", check: func(t *testing.T, p Policy) {}},
		{name: "empty regex", yaml: "limits: [{benchmark: 'regex:', max_p99_ms: 1}]\n", wantErr: "limits[0].benchmark"},
		{name: "bad direction", yaml: "units: {x: up}\n", wantErr: "units[x]"},
		{name: "NaN threshold", yaml: "geomean: {threshold_pct: .nan}\n", wantErr: "threshold_pct NaN must be finite and >= 0"},
		{name: "infinite threshold", yaml: "geomean: {threshold_pct: .inf}\n", wantErr: "threshold_pct +Inf must be finite and >= 0"},
		{name: "NaN limit", yaml: "limits: [{benchmark: X, max_mean_ms: .nan}]\n", wantErr: "limits[0]"},
		{name: "infinite limit", yaml: "limits: [{benchmark: X, max_p99_ms: .inf}]\n", wantErr: "limits[0]"},
		{name: "NaN trend", yaml: "trend: {p99_pct: .nan}\n", wantErr: "trend.p99_pct"},
		{name: "NaN trend floor", yaml: "trend: {floors: {ms: {mean_ms: .nan}}}\n", wantErr: "trend.floors[ms]: NaN must be finite"},
		{name: "floor of an unknown unit", yaml: "trend: {floors: {B/op: {mean_ms: 1}}}\n", wantErr: "trend.floors[B/op]: unknown unit"},
		{name: "bad missing_baseline", yaml: "trend: {missing_baseline: ignore}\n", wantErr: `trend.missing_baseline "ignore": want skip or fail`},
		{name: "floors replace the default floors", yaml: "trend: {missing_baseline: fail, floors: {sec/op: {mean_ms: 0.001}}}\n", check: func(t *testing.T, p Policy) {
			if p.Trend.MissingBaseline != MissingFail || p.Trend.Floors["sec/op"].MeanMs != 0.001 || len(p.Trend.Floors) != 1 {
				t.Fatalf("trend %+v", p.Trend)
			}
		}},
		{name: "negative threshold", yaml: "geomean: {threshold_pct: -1}\n", wantErr: "threshold_pct"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gate.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := LoadPolicy(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, p)
		})
	}
}

func TestDefaultIsTheContract(t *testing.T) {
	p := Default()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Alpha != 0.01 || p.Geomean.ThresholdPct != 5 || p.Trend.MeanPct != 10 || p.Trend.P99Pct != 15 ||
		p.Trend.MissingBaseline != MissingSkip || len(p.Trend.Floors) != 1 ||
		p.Trend.Floors["ms"] != (TrendFloor{MeanMs: 0.05, P99Ms: 0.10, BaselineMs: 0.10}) {
		t.Fatalf("default %+v", p)
	}
}
