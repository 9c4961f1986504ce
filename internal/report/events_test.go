package report

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadWindowsFailureRule: a window's p99 reads as +∞ when the line
// says "+Inf" (or, in a file written before, p99_failed), as nil when it
// is null, and a damaged value is a problem of the run.
func TestLoadWindowsFailureRule(t *testing.T) {
	lines := `{"start_ns":0,"end_ns":1000000000,"throughput":5,"ttft_p99_ms":80,"e2e_p99_ms":"+Inf"}
{"start_ns":1000000000,"end_ns":2000000000,"throughput":0,"ttft_p99_ms":"+Inf","e2e_p99_ms":"+Inf"}
{"start_ns":2000000000,"end_ns":3000000000,"throughput":0,"ttft_p99_ms":null,"e2e_p99_ms":null}
{"start_ns":3000000000,"end_ns":4000000000,"throughput":4,"ttft_p99_ms":95,"e2e_p99_ms":120,"p99_failed":true}
{"start_ns":4000000000,"end_ns":5000000000,"throughput":4,"ttft_p99_ms":"Inf"}
`
	path := filepath.Join(t.TempDir(), WindowsFile)
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Run{}
	r.loadWindows(path)
	if len(r.Windows) != 4 || len(r.Problems) != 1 {
		t.Fatalf("%d windows, problems %q; want 4 and the damaged line", len(r.Windows), r.Problems)
	}
	inf := math.Inf(1)
	for i, want := range [][2]float64{{80, inf}, {inf, inf}, {math.NaN(), math.NaN()}, {inf, inf}} {
		w := r.Windows[i]
		for j, got := range []*float64{w.TTFTP99, w.E2EP99} {
			switch {
			case math.IsNaN(want[j]) && got != nil:
				t.Errorf("window %d p99 %d: %v, want nil", i, j, *got)
			case !math.IsNaN(want[j]) && (got == nil || *got != want[j]):
				t.Errorf("window %d p99 %d: %v, want %v", i, j, got, want[j])
			}
		}
	}
}

// FuzzLoadWindows: whatever windows.jsonl holds, the report reads only
// windows that end after they start, whose p99s are nil, +∞ or a
// non-negative number — never NaN or negative — and counts the rest as
// problems.
func FuzzLoadWindows(f *testing.F) {
	f.Add([]byte(`{"start_ns":0,"end_ns":1,"throughput":5,"ttft_p99_ms":80,"e2e_p99_ms":"+Inf"}` + "\n"))
	f.Add([]byte(`{"start_ns":0,"end_ns":1,"ttft_p99_ms":null,"p99_failed":true}` + "\n" + `{"ttft_p99_ms":-1}`))
	f.Add([]byte(`{"start_ns":5,"end_ns":1}` + "\n" + `{"e2e_p99_ms":"NaN"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), WindowsFile)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r := &Run{}
		r.loadWindows(path)
		for _, w := range r.Windows {
			if w.EndS < w.StartS {
				t.Fatalf("window %+v ends before it starts", w)
			}
			for _, p := range []*float64{w.TTFTP99, w.E2EP99} {
				if p != nil && (math.IsNaN(*p) || *p < 0) {
					t.Fatalf("window %+v: p99 %v", w, *p)
				}
			}
		}
	})
}
