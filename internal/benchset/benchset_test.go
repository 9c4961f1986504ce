package benchset

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func problems(s *Set) string {
	var out []string
	for _, p := range s.Problems {
		out = append(out, p.String())
	}
	return strings.Join(out, "\n")
}

func TestReadBench(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		results   int
		problems  []string
		firstName string
	}{
		{"go test output", "goos: linux\npkg: x\nBenchmarkEncode/format=json-8 \t100\t1726 ns/op\t12 B/op\nPASS\nok  \tx\t1.0s\n", 1, nil, "Encode/format=json-8"},
		{"empty", "", 0, nil, ""},
		{"binary garbage", "\x00\x01\xff\n\x89PNG\r\n", 0, []string{"f.txt:1: unreadable line", "f.txt:2: unreadable line"}, ""},
		{"NaN and Inf and negative", "BenchmarkA 1 NaN ns/op\nBenchmarkA 1 +Inf ns/op\nBenchmarkA 1 -3 ns/op\nBenchmarkA 1 3 ns/op\n", 1,
			[]string{"f.txt:1: A: value of ns/op is NaN", "f.txt:2: A: value of ns/op is infinite", "f.txt:3: A: value of ns/op is negative (-3)"}, "A"},
		{"zero iterations", "BenchmarkA 0 3 ns/op\nBenchmarkA 1 3 ns/op\n", 1, []string{"f.txt:1: A: ran 0 iterations"}, "A"},
		{"syntax error", "BenchmarkA 1 3\nBenchmarkA x 3 ns/op\n", 0, []string{"f.txt:1:", "f.txt:2:"}, ""},
		{"failed run", "BenchmarkA 1 3 ns/op\n--- FAIL: BenchmarkB\npanic: boom\nFAIL\texample.com/x\t0.1s\n", 1,
			[]string{"f.txt:2: benchmark run failed", "f.txt:3: benchmark run failed", "f.txt:4: benchmark run failed"}, "A"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ReadBench(strings.NewReader(tc.in), "f.txt", "base")
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Results) != tc.results || len(s.Problems) != len(tc.problems) {
				t.Fatalf("%d results, problems:\n%s", len(s.Results), problems(s))
			}
			for i, want := range tc.problems {
				if !strings.Contains(s.Problems[i].String(), want) {
					t.Errorf("problem %d = %q, want %q", i, s.Problems[i], want)
				}
			}
			if tc.results > 0 {
				r := s.Results[0]
				if string(r.Name.Full()) != tc.firstName || r.GetConfig(".file") != "base" {
					t.Fatalf("first result %q .file=%q", r.Name.Full(), r.GetConfig(".file"))
				}
			}
		})
	}
}

func TestReadBenchTooLarge(t *testing.T) {
	in := "BenchmarkA 1 3 ns/op\nBenchmarkA 1 4 ns/op\n"
	if _, err := readBench(strings.NewReader(in), "f.txt", "L", int64(len(in)-5)); !IsTooLarge(err) || !strings.Contains(err.Error(), "f.txt: more than") {
		t.Fatalf("input over the limit: %v, want a *TooLargeError naming the file", err)
	}
	if s, _ := readBench(strings.NewReader(in), "f.txt", "L", int64(len(in))); len(s.Problems) != 0 || len(s.Results) != 2 {
		t.Fatalf("input of exactly the limit: %d results, %q", len(s.Results), problems(s))
	}
}

type runFiles map[string]string

func makeRun(t *testing.T, dir string, files runFiles) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runJSON(id string, valid, complete bool) string {
	return fmt.Sprintf(`{"run_id":%q,"workload":"Q2","name":"ControlMix","backend":"sage","valid":%v,"complete":%v,
"invalid_reasons":["x"],"summary":{"requests":10,"throughput":19.5,"goodput":18,"slo_attainment":0.95,"e2e":{"mean_ms":12.5,"p99_ms":40}}}`, id, valid, complete)
}

func TestReadRunDir(t *testing.T) {
	root := t.TempDir()
	makeRun(t, filepath.Join(root, "q2", "a"), runFiles{
		"run.json":  runJSON("q2-sage-0-aaaaaaaa", true, true),
		"bench.txt": "BenchmarkQ2ControlMix/backend=sage/policy=fifo 100 12345678 ns/op 45.1 p99-ms 19.8 req/s 0.97 slo-attainment\n",
		"requests.jsonl": `{"id":"t1","kind":"txn","e2e_ms":30,"ok":true}
{"id":"s1","kind":"stage","e2e_ms":10,"ok":true}
{"id":"r2","kind":"request","e2e_ms":0,"ok":false}
{"id":"r3","kind":"request","e2e_ms":50,"ok":false,"error":"timeout"}
{"id":"r4","kind":"request","e2e_`,
	})
	makeRun(t, filepath.Join(root, "q2", "b"), runFiles{"run.json": runJSON("q2-sage-1-bbbbbbbb", false, false)})
	makeRun(t, filepath.Join(root, "q2", "c"), runFiles{"run.json": runJSON("q2-sage-0-aaaaaaaa", true, true)})
	s, err := Read(root, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 3 || s.Runs[1].Valid || s.Runs[1].Complete {
		t.Fatalf("runs %+v", s.Runs)
	}
	if got := s.Latency["Q2ControlMix/backend=sage"]; fmt.Sprint(got) != "[30 +Inf +Inf]" {
		t.Fatalf("latency %v (stages excluded; a failed or unfinished request is +Inf)", got)
	}
	if len(s.Results) != 3 {
		t.Fatalf("%d results", len(s.Results))
	}
	sum := s.Results[1]
	if string(sum.Name.Full()) != "Q2ControlMix/backend=sage" || sum.GetConfig(".file") != root {
		t.Fatalf("summary result %q", sum.Name.Full())
	}
	if v, ok := sum.Value("sec/op"); !ok || math.Abs(v-0.0125) > 1e-12 {
		t.Fatalf("synthesized sec/op %v %v", v, ok)
	}
	p := problems(s)
	for _, want := range []string{"requests.jsonl:5:", "duplicate run_id \"q2-sage-0-aaaaaaaa\""} {
		if !strings.Contains(p, want) {
			t.Errorf("problems lack %q:\n%s", want, p)
		}
	}
}

// TestRunEvidenceNotDropped: every run directory contributes results or a
// problem, and bench.txt read on its own still carries its run's validity.
func TestRunEvidenceNotDropped(t *testing.T) {
	root := t.TempDir()
	makeRun(t, filepath.Join(root, "a"), runFiles{"run.json": runJSON("a", true, true), "bench.txt": "BenchmarkA 1 1 ns/op\n"})
	makeRun(t, filepath.Join(root, "b"), runFiles{"run.json": runJSON("b", true, true), "bench.txt": "PASS\n"})
	s, err := Read(root, "")
	if err != nil {
		t.Fatal(err)
	}
	if p := problems(s); !strings.Contains(p, "bench.txt: holds no benchmark results") {
		t.Fatalf("empty bench.txt of a run not reported; problems:\n%s", p)
	}
	empty := makeRun(t, filepath.Join(root, "empty"), runFiles{"run.json": `{"run_id":"e","workload":"Q2","name":"X","backend":"sage","valid":true,"complete":true}`})
	s, err = Read(empty, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Results) != 0 || !strings.Contains(problems(s), "no requests") {
		t.Fatalf("summary of 0 requests taken as evidence: %d results, problems:\n%s", len(s.Results), problems(s))
	}
	outer := makeRun(t, filepath.Join(root, "outer"), runFiles{"run.json": runJSON("o", true, true), "bench.txt": "BenchmarkA 1 1 ns/op\n"})
	makeRun(t, filepath.Join(outer, "retry"), runFiles{"run.json": runJSON("r", false, false), "bench.txt": "BenchmarkA 1 1 ns/op\n"})
	if s, err = Read(outer, ""); err != nil || len(s.Runs) != 2 {
		t.Fatalf("run nested in a run directory skipped: err %v, runs %+v", err, s.Runs)
	}
	inv := makeRun(t, filepath.Join(root, "inv"), runFiles{"run.json": runJSON("inv", false, true), "bench.txt": "BenchmarkA 1 1 ns/op\n"})
	s, err = Read(filepath.Join(inv, "bench.txt"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 1 || s.Runs[0].Valid {
		t.Fatalf("bench.txt next to an invalid run.json: runs %+v", s.Runs)
	}
}

func TestReadRunTreeErrors(t *testing.T) {
	tests := []struct {
		name    string
		files   runFiles
		wantErr string
	}{
		{"no run.json", runFiles{"bench.txt": "BenchmarkA 1 1 ns/op\n"}, "has no run.json"},
		{"requests without run.json", runFiles{"requests.jsonl": "{}\n"}, "has no run.json"},
		{"nothing", runFiles{"notes.md": "hi"}, "no run directory"},
		{"truncated run.json", runFiles{"run.json": `{"run_id":"x","work`}, "decoding run.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := makeRun(t, filepath.Join(t.TempDir(), "r"), tc.files)
			if _, err := Read(dir, ""); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	t.Run("symlinked run directory", func(t *testing.T) {
		root := t.TempDir()
		makeRun(t, filepath.Join(root, "tree", "a"), runFiles{"run.json": runJSON("a", true, true)})
		bad := makeRun(t, filepath.Join(root, "elsewhere", "b"), runFiles{"run.json": runJSON("b", false, false)})
		if err := os.Symlink(bad, filepath.Join(root, "tree", "b")); err != nil {
			t.Skip(err)
		}
		if _, err := Read(filepath.Join(root, "tree"), ""); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Fatalf("err = %v, want the link refused", err)
		}
	})
	if _, err := Read(filepath.Join(t.TempDir(), "missing"), ""); err == nil {
		t.Fatal("missing path accepted")
	}
}

func TestReadUnified(t *testing.T) {
	in := `{"backend":"sage","workload":"Q1","run_id":"a","nodes":1,"parallelism":2,"throughput":10,"latency_p50":5,"latency_p95":8,"latency_p99":9,"success_rate":1}
{"backend":"sage","workload":"Q1","run_id":"a","throughput":11}
{"backend":"sage","workload":"Q1","run_id":"b","throughput":-1}
not json
{"backend":"sage","workload":"Q1","run_id":"c","nodes":1,"parallelism":2,"throughput":12,"latency_p50":5,"latency_p95":8,"latency_p99":9,"success_rate":1,"metadata":{"valid":true,"complete":true,"invalid_reasons":[]}}
`
	s, err := ReadUnified(strings.NewReader(in), "unified_results.jsonl", "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 3 || s.Runs[0].Valid || s.Runs[0].Reasons[0] != "validity not recorded (no metadata.valid and metadata.complete)" ||
		!s.Runs[2].Valid || !s.Runs[2].Complete || s.Runs[2].ID != "c" {
		t.Fatalf("runs of unified rows %+v", s.Runs)
	}
	if len(s.Results) != 2 || string(s.Results[0].Name.Full()) != "Q1/backend=sage/nodes=1/parallelism=2" {
		t.Fatalf("results %v", s.Results)
	}
	if v, _ := s.Results[1].Value("req/s"); v != 12 {
		t.Fatalf("req/s %v", v)
	}
	p := problems(s)
	for _, want := range []string{"unified_results.jsonl:2: duplicate run_id \"a\" (first on line 1)", "unified_results.jsonl:3: run b: value of req/s is negative", "unified_results.jsonl:4: decoding unified row"} {
		if !strings.Contains(p, want) {
			t.Errorf("problems lack %q:\n%s", want, p)
		}
	}
}

// TestReadUnifiedConfigAndAggregate: a configuration row (a policy of a
// Q2 run) is its own benchmark, and an aggregate row is not one more sample.
func TestReadUnifiedConfigAndAggregate(t *testing.T) {
	row := func(id, md string) string {
		return `{"backend":"sage","workload":"Q2","run_id":"` + id + `","nodes":1,"parallelism":2,"throughput":10,"latency_p50":5,"latency_p95":8,"latency_p99":9,"success_rate":1,"metadata":{"valid":true,"complete":true` + md + `}}` + "\n"
	}
	in := row("r", "") + row("r/fifo", `,"config":"policy=fifo"`) + row("agg", `,"aggregate":true`)
	s, err := ReadUnified(strings.NewReader(in), "u.jsonl", "u")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range s.Results {
		names = append(names, string(r.Name.Full()))
	}
	want := []string{"Q2/backend=sage/nodes=1/parallelism=2", "Q2/backend=sage/nodes=1/parallelism=2/policy=fifo"}
	if strings.Join(names, " ") != strings.Join(want, " ") || len(s.Runs) != 2 {
		t.Errorf("results %v (%d runs); want %v", names, len(s.Runs), want)
	}
}

// checkSet is the invariant every reader keeps on any input: results hold
// finite, non-negative values and the label.
func checkSet(t *testing.T, s *Set, label string) {
	for _, r := range s.Results {
		if r.GetConfig(".file") != label || len(r.Values) == 0 {
			t.Fatalf("result %q without label or values", r.Name.Full())
		}
		for _, v := range r.Values {
			if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) || v.Value < 0 {
				t.Fatalf("result %q kept bad value %v", r.Name.Full(), v.Value)
			}
		}
	}
}

func FuzzReadBench(f *testing.F) {
	f.Add([]byte("goos: linux\nBenchmarkA/x=1-8 10 100 ns/op 3 B/op\nPASS\n"))
	f.Add([]byte("Unit x assume=exact\nBenchmarkA 1 NaN x\n\x00\xff"))
	f.Add([]byte("BenchmarkA 1 1e309 ns/op\nBenchmarkB 1 -0 ns/op\n--- FAIL: x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadBench(strings.NewReader(string(b)), "f", "L")
		if err != nil {
			t.Fatal(err)
		}
		checkSet(t, s, "L")
	})
}

func FuzzReadUnified(f *testing.F) {
	f.Add([]byte(`{"backend":"sage","workload":"Q1","run_id":"a","throughput":1}` + "\n"))
	f.Add([]byte(`{"backend":"s","workload":"Q","run_id":"a","latency_p99":-1e308}` + "\n{\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadUnified(strings.NewReader(string(b)), "u", "L")
		if err != nil {
			t.Fatal(err)
		}
		checkSet(t, s, "L")
	})
}

func FuzzReadRunDir(f *testing.F) {
	f.Add([]byte(runJSON("q", true, true)), []byte(`{"id":"r","e2e_ms":1}`))
	f.Add([]byte(`{"run_id":"q","workload":"Q1","summary":{"e2e":{"mean_ms":-1}}}`), []byte("\xff\n{"))
	f.Fuzz(func(t *testing.T, runJSON, requests []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "run.json"), runJSON, 0o644)
		os.WriteFile(filepath.Join(dir, "requests.jsonl"), requests, 0o644)
		s, err := ReadRunDir(dir, "L")
		if err != nil {
			return // an unreadable run.json is an error, never a set
		}
		checkSet(t, s, "L")
		for _, lat := range s.Latency {
			for _, v := range lat {
				if v < 0 || math.IsNaN(v) {
					t.Fatalf("latency %v", v)
				}
			}
		}
	})
}
