package gate

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/record"
)

// series returns n values start, start+step, …
func series(start, step float64, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = start + step*float64(i)
	}
	return v
}

// lines renders Go benchmark lines for name with one unit.
func lines(name, unit string, vals []float64) string {
	var b strings.Builder
	for _, v := range vals {
		fmt.Fprintf(&b, "Benchmark%s \t100\t%v %s\n", name, v, unit)
	}
	return b.String()
}

func bench(t *testing.T, label, text string) *benchset.Set {
	t.Helper()
	s, err := benchset.ReadBench(strings.NewReader(text), label+".txt", label)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeRun writes a run directory with run.json, bench.txt and
// requests.jsonl (e2e latencies in ms).
func writeRun(t *testing.T, dir, id string, valid, complete bool, benchTxt string, e2e []float64) string {
	t.Helper()
	rd := filepath.Join(dir, id)
	if err := os.MkdirAll(rd, 0o755); err != nil {
		t.Fatal(err)
	}
	run := record.Run{RunID: id, Workload: "Q2", Name: "ControlMix", Backend: "sage", Valid: valid, Complete: complete}
	if !valid {
		run.InvalidReasons = []string{"delivered rate 40% below target"}
	}
	run.Summary.E2E.P99 = 1 // a wrong summary field the gate must not read
	b, _ := json.Marshal(run)
	var reqs strings.Builder
	for i, ms := range e2e {
		if math.IsNaN(ms) { // a request that failed fast
			fmt.Fprintf(&reqs, `{"id":"r%d","kind":"request","e2e_ms":5,"ok":false,"error":"http 503"}`+"\n", i)
			continue
		}
		fmt.Fprintf(&reqs, `{"id":"r%d","kind":"request","e2e_ms":%v,"ok":true}`+"\n", i, ms)
	}
	for name, data := range map[string]string{"run.json": string(b), "bench.txt": benchTxt, "requests.jsonl": reqs.String()} {
		if err := os.WriteFile(filepath.Join(rd, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rd
}

// unified reads 6 unified_results.jsonl rows with run ids from first on;
// the last one has validity valid.
func unified(t *testing.T, label string, first int, valid bool) *benchset.Set {
	t.Helper()
	var b strings.Builder
	for i := range 6 {
		v, reasons := true, "[]"
		if i == 5 && !valid {
			v, reasons = false, `["delivered rate 40% below target"]`
		}
		fmt.Fprintf(&b, `{"backend":"sage","workload":"Q2","run_id":"r%d","nodes":1,"parallelism":1,"throughput":%d,"latency_p50":5,"latency_p95":8,"latency_p99":9,"success_rate":1,"metadata":{"valid":%v,"complete":true,"invalid_reasons":%s}}`+"\n",
			first+i, 100+i, v, reasons)
	}
	s, err := benchset.ReadUnified(strings.NewReader(b.String()), label+".jsonl", label)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readDir(t *testing.T, dir, label string) *benchset.Set {
	t.Helper()
	s, err := benchset.Read(dir, label)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFailClosedMatrix is the gate's contract: each case names the rule
// that must decide and the verdict it must reach.
func TestFailClosedMatrix(t *testing.T) {
	ten := series(100, 1, 10)
	slow := series(120, 1, 10)
	okBase := lines("Encode", "ns/op", ten) + lines("Decode", "ns/op", ten)
	tests := []struct {
		name     string
		base     func(t *testing.T) *benchset.Set
		cur      func(t *testing.T) *benchset.Set
		policy   func(p *Policy)
		want     Verdict
		wantRule string
		wantText string
	}{
		{name: "missing baseline", base: nil,
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", okBase) },
			want: Inconclusive, wantRule: "input", wantText: "missing"},
		{name: "empty baseline",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", "") },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", okBase) },
			want: Inconclusive, wantRule: "input", wantText: "no benchmark results"},
		{name: "benchmark missing in current",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase) },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", lines("Encode", "ns/op", ten)) },
			want: Inconclusive, wantRule: "coverage", wantText: "Decode sec/op: missing in current"},
		{name: "benchmark missing in baseline",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", lines("Encode", "ns/op", ten)) },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", okBase) },
			want: Inconclusive, wantRule: "coverage", wantText: "missing in the baseline"},
		{name: "mismatched units",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", lines("Encode", "ns/op", ten)) },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", lines("Encode", "B/op", ten)) },
			want: Inconclusive, wantRule: "coverage", wantText: "Encode B/op: missing in the baseline"},
		{name: "expected symbol missing",
			base:   func(t *testing.T) *benchset.Set { return bench(t, "base", okBase) },
			cur:    func(t *testing.T) *benchset.Set { return bench(t, "current", okBase) },
			policy: func(p *Policy) { p.Expect = []string{"BenchmarkEncode", "BenchmarkFedAvg"} },
			want:   Inconclusive, wantRule: "expect", wantText: "BenchmarkFedAvg: expected benchmark missing in the baseline and in current"},
		{name: "too few samples for alpha 0.01",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", lines("Encode", "ns/op", series(100, 1, 4))) },
			cur: func(t *testing.T) *benchset.Set {
				return bench(t, "current", lines("Encode", "ns/op", series(200, 1, 4)))
			},
			want: Inconclusive, wantRule: "samples", wantText: "n=4+4: smallest attainable Mann-Whitney p=0.02857 > alpha 0.01; need >= 5"},
		{name: "enough samples at alpha 0.05 for n=4",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", lines("Encode", "ns/op", series(100, 1, 4))) },
			cur: func(t *testing.T) *benchset.Set {
				return bench(t, "current", lines("Encode", "ns/op", series(100.5, 1, 4)))
			},
			policy: func(p *Policy) { p.Alpha = 0.05 },
			want:   Pass, wantRule: "samples", wantText: ">= 4 samples per side"},
		{name: "unparsable garbage",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase+"\x00\x01\xff\xfe garbage\n") },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", okBase) },
			want: Inconclusive, wantRule: "input", wantText: "base.txt:21: unreadable line"},
		{name: "syntax error",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase) },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", okBase+"BenchmarkEncode 10 12 \n") },
			want: Inconclusive, wantRule: "input", wantText: "current.txt:21:"},
		{name: "NaN value",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase) },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", okBase+"BenchmarkEncode 10 NaN ns/op\n") },
			want: Inconclusive, wantRule: "input", wantText: "value of ns/op is NaN"},
		{name: "negative value",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase+"BenchmarkEncode 10 -5 ns/op\n") },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", okBase) },
			want: Inconclusive, wantRule: "input", wantText: "negative"},
		{name: "failed benchmark run",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase) },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", okBase+"--- FAIL: BenchmarkX\nFAIL\n") },
			want: Inconclusive, wantRule: "input", wantText: "benchmark run failed"},
		{name: "geomean regression beyond threshold",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase) },
			cur: func(t *testing.T) *benchset.Set {
				return bench(t, "current", lines("Encode", "ns/op", slow)+lines("Decode", "ns/op", ten))
			},
			want: Regression, wantRule: "geomean", wantText: "worse by 9.15%"},
		{name: "geomean regression below threshold",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase) },
			cur: func(t *testing.T) *benchset.Set {
				return bench(t, "current", lines("Encode", "ns/op", series(106, 1, 10))+lines("Decode", "ns/op", ten))
			},
			want: Pass, wantRule: "geomean", wantText: "+2.83% over 2 benchmarks"},
		{name: "noise is not a regression",
			base: func(t *testing.T) *benchset.Set {
				return bench(t, "base", lines("Encode", "ns/op", []float64{100, 130, 100, 130, 100, 130, 100, 130, 100, 130}))
			},
			cur: func(t *testing.T) *benchset.Set {
				return bench(t, "current", lines("Encode", "ns/op", []float64{101, 131, 101, 131, 101, 131, 101, 131, 101, 131}))
			},
			want: Pass, wantRule: "geomean", wantText: "counting only changes significant at alpha 0.01: +0.00% (0 worse)"},
		{name: "noisy shift beyond threshold is inconclusive",
			base: func(t *testing.T) *benchset.Set {
				return bench(t, "base", lines("Encode", "ns/op", []float64{100, 100, 100, 100, 100, 200, 200, 200, 200, 200}))
			},
			cur: func(t *testing.T) *benchset.Set {
				return bench(t, "current", lines("Encode", "ns/op", []float64{100, 100, 100, 100, 200, 200, 200, 200, 200, 200}))
			},
			want: Inconclusive, wantRule: "geomean", wantText: "too noisy to decide: the medians moved 33.33% for the worse"},
		{name: "throughput drop is worse",
			base:   func(t *testing.T) *benchset.Set { return bench(t, "base", lines("Q2", "req/s", slow)) },
			cur:    func(t *testing.T) *benchset.Set { return bench(t, "current", lines("Q2", "req/s", ten)) },
			policy: func(p *Policy) { p.Geomean.Units = []string{"req/s"} },
			want:   Regression, wantRule: "geomean", wantText: "worse by 16.06%"},
		{name: "throughput rise is better",
			base:   func(t *testing.T) *benchset.Set { return bench(t, "base", lines("Q2", "req/s", ten)) },
			cur:    func(t *testing.T) *benchset.Set { return bench(t, "current", lines("Q2", "req/s", slow)) },
			policy: func(p *Policy) { p.Geomean.Units = []string{"req/s"} },
			want:   Pass, wantRule: "geomean", wantText: "+19.14%"},
		{name: "unknown unit direction",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase+lines("Encode", "widgets", ten)) },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", okBase+lines("Encode", "widgets", slow)) },
			want: Inconclusive, wantRule: "direction", wantText: "Encode widgets: significant change +19.14%"},
		{name: "declared unit direction",
			base:   func(t *testing.T) *benchset.Set { return bench(t, "base", okBase+lines("Encode", "widgets", ten)) },
			cur:    func(t *testing.T) *benchset.Set { return bench(t, "current", okBase+lines("Encode", "widgets", slow)) },
			policy: func(p *Policy) { p.Units = map[string]string{"widgets": HigherIsBetter} },
			want:   Pass, wantRule: "geomean"},
		{name: "machines differ in cpu",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", "cpu: A\n"+okBase) },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", "cpu: B\n"+okBase) },
			want: Inconclusive, wantRule: "coverage", wantText: "configuration cpu: A; keys that differ only by machine"},
		{name: "machines differ in cpu, ignored",
			base:   func(t *testing.T) *benchset.Set { return bench(t, "base", "cpu: A\n"+okBase) },
			cur:    func(t *testing.T) *benchset.Set { return bench(t, "current", "cpu: B\n"+okBase) },
			policy: func(p *Policy) { p.Ignore = "cpu" },
			want:   Pass, wantRule: "geomean", wantText: "over 2 benchmarks"},
		{name: "zero iterations",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase) },
			cur: func(t *testing.T) *benchset.Set {
				return bench(t, "current", strings.ReplaceAll(okBase, "\t100\t", "\t0\t"))
			},
			want: Inconclusive, wantRule: "input", wantText: "ran 0 iterations"},
		{name: "input flips the direction of a known unit",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase) },
			cur: func(t *testing.T) *benchset.Set {
				return bench(t, "current", "Unit ns/op better=higher\n"+lines("Encode", "ns/op", slow)+lines("Decode", "ns/op", ten))
			},
			want: Inconclusive, wantRule: "units", wantText: "better=higher"},
		{name: "sides disagree on unit metadata",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", "Unit widgets better=lower\n"+okBase) },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", "Unit widgets better=higher\n"+okBase) },
			want: Inconclusive, wantRule: "units", wantText: "widgets better: baseline says lower, current says higher"},
		{name: "current alone declares the direction of an unknown unit",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase+lines("Encode", "widgets", ten)) },
			cur: func(t *testing.T) *benchset.Set {
				return bench(t, "current", "Unit widgets better=higher\n"+okBase+lines("Encode", "widgets", slow))
			},
			want: Inconclusive, wantRule: "units", wantText: "current input alone declares widgets better=higher"},
		{name: "assume=exact hides varying values",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase) },
			cur: func(t *testing.T) *benchset.Set {
				return bench(t, "current", "Unit ns/op assume=exact\n"+lines("Encode", "ns/op", append([]float64{100}, series(500, 1, 9)...))+lines("Decode", "ns/op", ten))
			},
			want: Inconclusive, wantRule: "samples", wantText: "assume=exact"},
		{name: "huge values are a regression",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", okBase) },
			cur: func(t *testing.T) *benchset.Set {
				return bench(t, "current", lines("Encode", "ns/op", series(1e300, 1e290, 10))+lines("Decode", "ns/op", ten))
			},
			want: Regression, wantRule: "geomean", wantText: "worse by"},
		{name: "run directory against benchmark text",
			base: func(t *testing.T) *benchset.Set {
				return readDir(t, writeRun(t, t.TempDir(), "q2-sage-0-aaaaaaaa", true, true, okBase, nil), "base")
			},
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", okBase) },
			want: Inconclusive, wantRule: "input", wantText: "baseline is run directories, current is benchmark results without run.json"},
		{name: "bench.txt of an invalid run read on its own",
			base: func(t *testing.T) *benchset.Set {
				return readDir(t, writeRun(t, t.TempDir(), "q2-sage-0-aaaaaaaa", true, true, okBase, nil), "base")
			},
			cur: func(t *testing.T) *benchset.Set {
				rd := writeRun(t, t.TempDir(), "q2-sage-0-bbbbbbbb", false, true, okBase, nil)
				return readDir(t, filepath.Join(rd, "bench.txt"), "current")
			},
			want: Inconclusive, wantRule: "run-valid", wantText: "marked invalid"},
		{name: "tree with one run whose bench.txt is empty",
			base: func(t *testing.T) *benchset.Set {
				return readDir(t, writeRun(t, t.TempDir(), "q2-sage-0-aaaaaaaa", true, true, okBase, nil), "base")
			},
			cur: func(t *testing.T) *benchset.Set {
				dir := t.TempDir()
				writeRun(t, dir, "q2-sage-0-bbbbbbbb", true, true, okBase, nil)
				writeRun(t, dir, "q2-sage-0-cccccccc", true, true, "PASS\n", nil)
				return readDir(t, dir, "current")
			},
			want: Inconclusive, wantRule: "input", wantText: "holds no benchmark results"},
		{name: "latencies whose sum overflows",
			base: func(t *testing.T) *benchset.Set {
				return readDir(t, writeRun(t, t.TempDir(), "q2-sage-0-aaaaaaaa", true, true, okBase, []float64{1e308, 1e308}), "base")
			},
			cur: func(t *testing.T) *benchset.Set {
				return readDir(t, writeRun(t, t.TempDir(), "q2-sage-0-bbbbbbbb", true, true, okBase, []float64{1e308, 1.7e308}), "current")
			},
			want: Regression, wantRule: "trend-mean", wantText: "1e+308 ms -> 1.35e+308 ms"},
		{name: "the same run on both sides",
			base: func(t *testing.T) *benchset.Set {
				return readDir(t, writeRun(t, t.TempDir(), "q2-sage-0-aaaaaaaa", true, true, okBase, nil), "base")
			},
			cur: func(t *testing.T) *benchset.Set {
				return readDir(t, writeRun(t, t.TempDir(), "q2-sage-0-aaaaaaaa", true, true, okBase, nil), "current")
			},
			want: Inconclusive, wantRule: "input", wantText: "run q2-sage-0-aaaaaaaa is on both sides"},
		{name: "tree where one run of three is incomplete",
			base: func(t *testing.T) *benchset.Set {
				return readDir(t, writeRun(t, t.TempDir(), "q2-sage-0-aaaaaaaa", true, true, okBase, nil), "base")
			},
			cur: func(t *testing.T) *benchset.Set {
				dir := t.TempDir()
				writeRun(t, dir, "q2-sage-0-bbbbbbbb", true, true, okBase, nil)
				writeRun(t, filepath.Join(dir, "deep", "er"), "q2-sage-1-cccccccc", true, false, okBase, nil)
				writeRun(t, dir, "q2-sage-2-dddddddd", true, true, okBase, nil)
				return readDir(t, dir, "current")
			},
			want: Inconclusive, wantRule: "run-valid", wantText: "run q2-sage-1-cccccccc"},
		{name: "run marked valid that lists reasons it is not",
			base: func(t *testing.T) *benchset.Set {
				s := bench(t, "base", okBase)
				s.Runs = []benchset.Run{{ID: "a", Valid: true, Complete: true}}
				return s
			},
			cur: func(t *testing.T) *benchset.Set {
				s := bench(t, "current", okBase)
				s.Runs = []benchset.Run{{ID: "b", Valid: true, Complete: true, Reasons: []string{"delivered rate 40% below target"}}}
				return s
			},
			want: Inconclusive, wantRule: "run-valid", wantText: "marked valid but lists"},
		{name: "unified rows of an invalid run",
			base: func(t *testing.T) *benchset.Set { return unified(t, "base", 0, true) },
			cur:  func(t *testing.T) *benchset.Set { return unified(t, "current", 10, false) },
			want: Inconclusive, wantRule: "run-valid", wantText: "marked invalid: delivered rate"},
		{name: "no geomean unit present",
			base: func(t *testing.T) *benchset.Set { return bench(t, "base", lines("Q2", "req/s", ten)) },
			cur:  func(t *testing.T) *benchset.Set { return bench(t, "current", lines("Q2", "req/s", ten)) },
			want: Inconclusive, wantRule: "geomean", wantText: "no results in these units"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Default()
			if tc.policy != nil {
				tc.policy(&p)
			}
			var base, cur *benchset.Set
			if tc.base != nil {
				base = tc.base(t)
			}
			if tc.cur != nil {
				cur = tc.cur(t)
			}
			o, err := Evaluate(base, cur, p)
			if err != nil {
				t.Fatal(err)
			}
			checkOutcome(t, o, tc.want, tc.wantRule, tc.wantText)
		})
	}
}

// checkOutcome asserts the verdict and that a finding of rule with that
// verdict (or Pass lines for a pass) contains text.
func checkOutcome(t *testing.T, o *Outcome, want Verdict, rule, text string) {
	t.Helper()
	var all []string
	found := false
	for _, f := range o.Findings {
		all = append(all, f.String())
		if f.Rule == rule && strings.Contains(f.String(), text) && (f.Verdict == want || want == Pass) {
			found = true
		}
	}
	if o.Verdict != want || !found {
		t.Fatalf("verdict %v (want %v), finding %s/%q found=%v; findings:\n%s", o.Verdict, want, rule, text, found, strings.Join(all, "\n"))
	}
}

func TestRunRules(t *testing.T) {
	benchTxt := lines("Q2ControlMix/backend=sage", "ns/op", series(1e6, 1000, 6))
	fast := series(10, 0.1, 200)                              // mean 19.95 ms, p99 29.7 ms
	tail := append(series(10, 0, 190), series(500, 0, 10)...) // mean 34.5 ms, p99 500 ms
	// failing: 3 of 200 fail fast (5 ms); the p99's rank (198) falls on them.
	failing := append(series(10, 0.1, 197), math.NaN(), math.NaN(), math.NaN())
	tests := []struct {
		name             string
		baseValid        bool
		curValid         bool
		curComplete      bool
		curE2E           []float64
		limits           []Limit
		want             Verdict
		wantRule, wantIn string
	}{
		{"valid runs pass", true, true, true, fast, nil, Pass, "trend-mean", "1 benchmarks within"},
		{"invalid current run", true, false, true, fast, nil, Inconclusive, "run-valid", "marked invalid: delivered rate"},
		{"invalid baseline run", false, true, true, fast, nil, Inconclusive, "run-valid", "baseline"},
		{"incomplete run", true, true, false, fast, nil, Inconclusive, "run-valid", "incomplete"},
		{"p99 limit from requests.jsonl", true, true, true, tail,
			[]Limit{{Benchmark: "Q2ControlMix/backend=sage", MaxP99Ms: 100}}, Regression, "limit-p99", "500 ms > limit 100 ms (requests.jsonl e2e_ms, n=200)"},
		{"mean limit from requests.jsonl", true, true, true, fast,
			[]Limit{{Benchmark: "regex:Q2ControlMix/.*", MaxMeanMs: 15}}, Regression, "limit-mean", "19.95 ms > limit 15 ms"},
		{"a pattern without regex: is a name", true, true, true, fast,
			[]Limit{{Benchmark: "Q2ControlMix/.*", MaxMeanMs: 15}}, Inconclusive, "limit", "matches no benchmark"},
		{"a benchmark function limits its sub-benchmarks", true, true, true, fast,
			[]Limit{{Benchmark: "Q2ControlMix", MaxMeanMs: 15}}, Regression, "limit-mean", "19.95 ms > limit 15 ms"},
		{"limits hold", true, true, true, fast,
			[]Limit{{Benchmark: "Q2ControlMix/backend=sage", MaxMeanMs: 50, MaxP99Ms: 50}}, Pass, "limit-p99", "29.7 ms <= limit 50 ms"},
		{"limit matching nothing", true, true, true, fast,
			[]Limit{{Benchmark: "Q9Nothing", MaxP99Ms: 50}}, Inconclusive, "limit", "matches no benchmark"},
		{"p99 trend beyond 15% and floor", true, true, true, tail, nil, Regression, "trend-p99", "29.7 ms -> 500 ms"},
		{"fast failures are +∞ at the p99", true, true, true, failing,
			[]Limit{{Benchmark: "Q2ControlMix/backend=sage", MaxP99Ms: 100}}, Regression, "limit-p99", "+Inf ms > limit 100 ms (requests.jsonl e2e_ms, n=200, 3 failed counted as +∞)"},
		{"fast failures are a p99 trend", true, true, true, failing, nil, Regression, "trend-p99", "29.7 ms -> +Inf ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRun(t, filepath.Join(dir, "base"), "q2-sage-0-aaaaaaaa", tc.baseValid, true, benchTxt, fast)
			writeRun(t, filepath.Join(dir, "cur"), "q2-sage-0-bbbbbbbb", tc.curValid, tc.curComplete, benchTxt, tc.curE2E)
			p := Default()
			p.Limits = tc.limits
			p.Alpha = 0.05
			o, err := Evaluate(readDir(t, filepath.Join(dir, "base"), "base"), readDir(t, filepath.Join(dir, "cur"), "current"), p)
			if err != nil {
				t.Fatal(err)
			}
			checkOutcome(t, o, tc.want, tc.wantRule, tc.wantIn)
		})
	}
}

func TestLimitWithoutEvidenceIsInconclusive(t *testing.T) {
	base := bench(t, "base", lines("Encode", "ns/op", series(100, 1, 10)))
	cur := bench(t, "current", lines("Encode", "ns/op", series(100, 1, 10)))
	p := Default()
	p.Limits = []Limit{{Benchmark: "Encode", MaxP99Ms: 1}}
	o, err := Evaluate(base, cur, p)
	if err != nil {
		t.Fatal(err)
	}
	checkOutcome(t, o, Inconclusive, "limit-p99", "no evidence")
}

// TestP99LimitMissingRun: a run that left p99-ms out of its bench line
// (failures counted as +∞ reached its rank) is not a pass of the p99 limit
// on the worst of the others: the worst run's p99 is unknown.
func TestP99LimitMissingRun(t *testing.T) {
	side := func(label string, lastHasP99 bool) *benchset.Set {
		text := "BenchmarkQ2 \t100\t1000000 ns/op\t20 p99-ms\t0 error-ratio\n" +
			"BenchmarkQ2 \t100\t1100000 ns/op\t22 p99-ms\t0 error-ratio\n"
		if lastHasP99 {
			text += "BenchmarkQ2 \t100\t1050000 ns/op\t21 p99-ms\t0 error-ratio\n"
		} else {
			text += "BenchmarkQ2 \t100\t1050000 ns/op\t0.05 error-ratio\n"
		}
		return bench(t, label, text)
	}
	tests := []struct {
		name   string
		cur    *benchset.Set
		want   Verdict
		wantIn string
	}{
		{"every run has a p99", side("current", true), Pass, "22 ms <= limit 50 ms (p99-ms, worst of 3 runs)"},
		{"one run has none", side("current", false), Inconclusive, "1 of 3 runs have no p99-ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Default()
			p.Limits = []Limit{{Benchmark: "Q2", MaxP99Ms: 50}}
			o, err := EvaluateCurrent(tc.cur, p)
			if err != nil {
				t.Fatal(err)
			}
			checkOutcome(t, o, tc.want, "limit-p99", tc.wantIn)
		})
	}
}

// TestRequestsMean: a mean is the successes' (a failed request is +Inf in
// the evidence), saying how many failed; all failed is not evaluable.
func TestRequestsMean(t *testing.T) {
	inf := math.Inf(1)
	if s := requestsMean([]float64{10, 20, inf}); !s.ok || s.value != 15 || s.detail != "requests.jsonl e2e_ms of the successes, n=3, 1 failed counted as +∞" {
		t.Errorf("mean with a failure: %+v", s)
	}
	if s := requestsMean([]float64{inf, inf}); s.ok || !strings.Contains(s.why, "all 2 requests failed") {
		t.Errorf("mean of failures: %+v", s)
	}
}

func TestTrendWorse(t *testing.T) {
	tests := []struct {
		name      string
		base, cur float64
		want      bool
	}{
		{"exactly +10% is within", 1, 1.1, false},
		{"+9% of 1 ms: floor passed, pct not", 1, 1.09, false},
		{"+20% of 1 ms beyond pct and floor", 1, 1.2, true},
		{"+50% but delta below floor", 0.08 * 2, 0.08*2 + 0.04, false},
		{"below baseline floor, delta above floor", 0.05, 0.11, true},
		{"below baseline floor, delta below floor", 0.05, 0.09, false},
		{"big baseline, +5%", 100, 105, false},
		{"big baseline, +11%", 100, 111, true},
		{"improvement", 1, 0.5, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := trendWorse(tc.base, tc.cur, 10, 0.05, 0.10); got != tc.want {
				t.Fatalf("trendWorse(%v, %v) = %v", tc.base, tc.cur, got)
			}
		})
	}
}

func TestMinAttainableP(t *testing.T) {
	// The values of benchmath's uTestMinP table for n = n1 = n2.
	want := map[int]float64{1: 1, 2: 0.3333333333333333, 3: 0.1, 4: 0.02857142857142857, 5: 0.007936507936507936, 9: 4.113533525298231e-05}
	for n, w := range want {
		if got := MinAttainableP(n, n); fmt.Sprintf("%.12g", got) != fmt.Sprintf("%.12g", w) {
			t.Errorf("MinAttainableP(%d,%d) = %v, want %v", n, n, got, w)
		}
	}
	if got := MinAttainableP(3, 10); fmt.Sprintf("%.6g", got) != fmt.Sprintf("%.6g", 2.0/286) {
		t.Errorf("MinAttainableP(3,10) = %v", got)
	}
	for alpha, n := range map[float64]int{0.05: 4, 0.01: 5, 0.001: 7} {
		if got := MinSamples(alpha); got != n {
			t.Errorf("MinSamples(%v) = %d, want %d", alpha, got, n)
		}
	}
}

func TestSameLabelIsMisuse(t *testing.T) {
	a := bench(t, "x", lines("A", "ns/op", series(1, 1, 5)))
	if _, err := Evaluate(a, a, Default()); err != ErrSameLabel {
		t.Fatalf("err = %v", err)
	}
}
