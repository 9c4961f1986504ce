package stats

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/benchset"
)

func compareFiles(t *testing.T, opts Options, files ...string) *Report {
	t.Helper()
	var sets []*benchset.Set
	for _, f := range files {
		s, err := benchset.Read(filepath.Join("testdata", f), f)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s)
	}
	results, units := benchset.Combine(sets...)
	rep, err := Compare(results, units, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestWriteFormats(t *testing.T) {
	rep := compareFiles(t, Options{}, "sage-base.txt", "sage-current.txt")
	tests := []struct {
		format string
		want   []string
	}{
		{"text", []string{"Q2ControlMix/backend=sage/policy=priority", "+8.57%", "(p=0.000 n=10)", "geomean", "+2.26%"}},
		{"markdown", []string{"| benchmark | sage-base.txt sec/op |", "| Q2ControlMix/backend=sage/policy=fifo | 12.22m ± 2% |", "| **geomean** |"}},
		{"csv", []string{"config,unit,benchmark,column,n,center,lo,hi,ci,vs_base,ratio,p,warnings", ",sec/op,Q2ControlMix/backend=sage/policy=priority,sage-current.txt,10,0.012005219000000001,"}},
		{"json", []string{`"unit": "sec/op"`, `"delta": "+8.57%"`}},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := rep.Write(&buf, tc.format); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("%s output lacks %q:\n%s", tc.format, w, buf.String())
				}
			}
		})
	}
	if err := rep.Write(&bytes.Buffer{}, "xml"); err == nil {
		t.Fatal("unknown format accepted")
	}
}

func TestJSONWithUnboundedCI(t *testing.T) {
	rep := compareFiles(t, Options{Col: "note"}, "smallSample.txt")
	var buf bytes.Buffer
	if err := rep.Write(&buf, "json"); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"lo": null`) || !strings.Contains(buf.String(), "6 samples for confidence interval") {
		t.Fatalf("json:\n%s", buf.String())
	}
}

func TestColCompare(t *testing.T) {
	rep := compareFiles(t, Options{Col: "/format"}, "codec.txt")
	tb := rep.Tables[0]
	if tb.Unit != "sec/op" || strings.Join(tb.Columns, ",") != "json,zerocopy" || len(tb.Rows) != 2 {
		t.Fatalf("table %+v", tb)
	}
	c := tb.Rows[0].Cells[1]
	if !c.Significant() || c.Ratio > 0.1 {
		t.Fatalf("zerocopy vs json: %+v", c)
	}
}

func TestDirection(t *testing.T) {
	tests := []struct {
		unit string
		want int
	}{
		{"ns/op", LowerIsBetter}, {"sec/op", LowerIsBetter}, {"B/op", LowerIsBetter}, {"allocs/op", LowerIsBetter},
		{"p99-ms", LowerIsBetter}, {"ttft-p99-ms", LowerIsBetter}, {"mean-ms", LowerIsBetter},
		{"req/s", HigherIsBetter}, {"MB/s", HigherIsBetter}, {"B/s", HigherIsBetter}, {"slo-attainment", HigherIsBetter},
		{"goodput", HigherIsBetter}, {"goodput-req/s", HigherIsBetter}, {"error-ratio", LowerIsBetter}, {"success-rate", HigherIsBetter}, {"tx/s", HigherIsBetter},
		{"widgets", Unknown}, {"text-bytes", Unknown},
		// Every unit sagebench's own benchmarks and records emit.
		{"cpu-ns/op", LowerIsBetter}, {"cpu-sec/op", LowerIsBetter}, {"cpu-ns/record", LowerIsBetter}, {"us/doc", LowerIsBetter},
		{"p50-ms", LowerIsBetter}, {"p95-ms", LowerIsBetter}, {"latency-p50-ms", LowerIsBetter}, {"batch-model-ms", LowerIsBetter},
		{"host-timer-lag-ms", LowerIsBetter}, {"ms/op", LowerIsBetter}, {"p50-us", LowerIsBetter}, {"added-p99-us", LowerIsBetter},
		{"hop-p99-µs", LowerIsBetter}, {"lag-max-µs", LowerIsBetter}, {"source-lag-p99-µs", LowerIsBetter}, {"lag-p99-μs", LowerIsBetter},
		{"B/stream", LowerIsBetter}, {"late-steps", LowerIsBetter},
		{"records/s", HigherIsBetter}, {"events/s", HigherIsBetter}, {"tokens/s", HigherIsBetter}, {"recall@10", HigherIsBetter},
		{"errors/s", LowerIsBetter},
		{"inputs/batch", Unknown}, {"model/measured", Unknown}, {"llm-ratio", Unknown},
	}
	for _, tc := range tests {
		if got := Direction(tc.unit, nil); got != tc.want {
			t.Errorf("Direction(%q) = %d, want %d", tc.unit, got, tc.want)
		}
	}
	if !Worse(LowerIsBetter, 1, 2) || Worse(LowerIsBetter, 2, 1) || !Worse(HigherIsBetter, 2, 1) || Worse(Unknown, 1, 2) {
		t.Fatal("Worse is wrong")
	}
}

func TestCompareErrors(t *testing.T) {
	if _, err := Compare(nil, nil, Options{}); err != ErrNoResults {
		t.Fatalf("no results: %v", err)
	}
	if _, err := Compare(nil, nil, Options{Alpha: 2}); err == nil {
		t.Fatal("alpha 2 accepted")
	}
	if err := (Options{Alpha: math.NaN()}).Validate(); err == nil {
		t.Fatal("alpha NaN accepted")
	}
	if err := (Options{Confidence: math.NaN()}).Validate(); err == nil {
		t.Fatal("confidence NaN accepted")
	}
	if _, err := Compare(nil, nil, Options{Filter: "((("}); err == nil {
		t.Fatal("bad filter accepted")
	}
}
