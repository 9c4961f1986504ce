package benchset

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadPytest(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		results  int
		problems []string
		check    func(t *testing.T, s *Set)
	}{
		{name: "with data", in: `{"benchmarks":[{"group":"sdk","name":"test_agg[512 clients]","fullname":"t.py::test_agg","params":{"n":512},"extra_info":{},
"stats":{"min":0.001,"max":0.003,"mean":0.002,"stddev":0.001,"median":0.002,"iqr":0.001,"ops":500,"rounds":3,"iterations":1,"data":[0.001,0.002,0.003]}}]}`,
			results: 3, check: func(t *testing.T, s *Set) {
				sum := s.Summaries["test_agg[512_clients]"]
				if sum.Rounds != 3 || sum.MeanMs != 2 || len(sum.DataMs) != 3 || sum.DataMs[2] != 3 {
					t.Fatalf("summary %+v", sum)
				}
				if v, _ := s.Results[1].Value("sec/op"); v != 0.002 || s.Results[1].GetConfig("group") != "sdk" {
					t.Fatalf("result %v", s.Results[1])
				}
			}},
		{name: "without data", in: `{"benchmarks":[{"group":null,"name":"test_x","stats":{"mean":0.5,"rounds":7}}]}`,
			results: 1, check: func(t *testing.T, s *Set) {
				if sum := s.Summaries["test_x"]; sum.DataMs != nil || sum.MeanMs != 500 || sum.Rounds != 7 {
					t.Fatalf("summary %+v", sum)
				}
			}},
		{name: "not pytest", in: `{"foo":1}`, problems: []string{`f.json: not a pytest-benchmark JSON: no "benchmarks" array`}},
		{name: "Python NaN", in: `{"benchmarks":[{"name":"a","stats":{"mean":NaN,"rounds":1}}]}`, problems: []string{"decoding pytest-benchmark JSON"}},
		{name: "bad entries", in: `{"benchmarks":[{"name":"","stats":{"mean":1,"rounds":1}},{"name":"a","stats":{"rounds":1}},
{"name":"b","stats":{"mean":-1,"rounds":1}},{"name":"c","stats":{"mean":1,"rounds":0}},{"name":"d","stats":{"mean":1,"rounds":2,"data":[1]}},
{"name":"e","stats":{"mean":1,"rounds":1,"data":[-1]}},{"name":"f","stats":{"mean":1,"rounds":1}},{"name":"f","stats":{"mean":2,"rounds":1}}]}`,
			results: 1, problems: []string{"benchmarks[0] \"\": no name", "benchmarks[1] \"a\": no stats.mean", "benchmarks[2] \"b\": stats.mean -1",
				"benchmarks[3] \"c\": stats.rounds 0", "benchmarks[4] \"d\": stats.data holds 1 values for 2 rounds", "benchmarks[5] \"e\": stats.data[0] -1",
				"benchmarks[7]: duplicate name \"f\" (first at benchmarks[6])"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ReadPytest(strings.NewReader(tc.in), "f.json", "L")
			if err != nil {
				t.Fatal(err)
			}
			checkSet(t, s, "L")
			if len(s.Results) != tc.results || len(s.Problems) != len(tc.problems) {
				t.Fatalf("%d results, problems:\n%s", len(s.Results), problems(s))
			}
			for i, want := range tc.problems {
				if !strings.Contains(s.Problems[i].String(), want) {
					t.Errorf("problem %d = %q, want %q", i, s.Problems[i], want)
				}
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

// TestReadPicksPytestByExtension: Read takes a *.json file for
// pytest-benchmark JSON.
func TestReadPicksPytestByExtension(t *testing.T) {
	p := filepath.Join(t.TempDir(), "benchmark-results.json")
	if err := os.WriteFile(p, []byte(`{"benchmarks":[{"name":"t","stats":{"mean":1,"rounds":1}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Read(p, "")
	if err != nil || len(s.Results) != 1 || s.Summaries["t"].MeanMs != 1000 {
		t.Fatalf("err %v, set %+v", err, s)
	}
}

func FuzzReadPytest(f *testing.F) {
	f.Add([]byte(`{"benchmarks":[{"name":"t[a]","group":"g","stats":{"mean":0.1,"rounds":2,"iterations":3,"data":[0.1,0.1]}}]}`))
	f.Add([]byte(`{"benchmarks":[{"name":"t\n x","stats":{"mean":1e308,"rounds":1,"data":[1e309]}}]}`))
	f.Add([]byte(`{"benchmarks":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadPytest(strings.NewReader(string(b)), "f.json", "L")
		if err != nil {
			t.Fatal(err)
		}
		checkSet(t, s, "L")
		for name, sum := range s.Summaries {
			if sum.Rounds < 1 || math.IsInf(sum.MeanMs, 0) || (sum.DataMs != nil && len(sum.DataMs) != sum.Rounds) || strings.ContainsAny(name, " \n\t") {
				t.Fatalf("summary %q %+v", name, sum)
			}
		}
	})
}
