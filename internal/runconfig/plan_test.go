package runconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/catalog"
	"github.com/sagebench/sagebench/internal/workload"
)

func TestEveryWorkloadIsSized(t *testing.T) {
	for _, spec := range catalog.Catalog() {
		if !spec.Implemented() {
			continue
		}
		for _, quick := range []bool{false, true} {
			cfg := spec.New(quick).Config()
			sz, ok := cfg.(workload.Sizer)
			if !ok {
				t.Errorf("%s: its config does not implement workload.Sizer: its plan cannot be bounded before it is drawn", spec.ID)
				continue
			}
			if s := sz.Size(); s.Phases < 1 || s.Terms == "" || checkPlan(cfg, 1) != nil {
				t.Errorf("%s (quick %v): default size %+v, %v", spec.ID, quick, s, checkPlan(cfg, 1))
			}
		}
	}
}

func TestCheckPlan(t *testing.T) {
	spec, err := catalog.Lookup("q2")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		yaml   string
		repeat int
		want   string
	}{
		{"defaults", "", 1, ""},
		{"rounds 1e8", "q2:\n  rounds: 100000000\n", 1, "phases per repetition"},
		{"arrivals × repetitions", "q2:\n  schedule: {process: poisson, rate: 1000, count: 20000}\n", 2000, "arrivals over 2000"},
		{"span", "q2:\n  schedule: {process: poisson, rate: 1, duration: 700h}\n  rounds: 2\n", 1, "span"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shared := DefaultShared()
			shared.Repeat = tc.repeat
			f, err := ParseConfig("c.yaml", []byte(tc.yaml), &shared, env(nil))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, _, err = Resolve(spec, shared, f, workload.Overrides{})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Resolve: %v, want %q", err, tc.want)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

func TestExpandRefusesStructure(t *testing.T) {
	for _, v := range []string{"5\n  rounds: 9", "a: b", "x #c", "[1, 2]", "{a: 1}", "*alias", "&anchor", "!!tag", "|", `"q"`, "a,b", "back\\slash", "tab\there", " lead"} {
		_, err := Expand("rate: ${V}", env(map[string]string{"V": v}))
		if err == nil || !strings.Contains(err.Error(), "V (used as ${V})") {
			t.Errorf("value %q: %v, want a refusal naming V", v, err)
		}
	}
	for _, v := range []string{"30", "-1.5", "2s", "http://127.0.0.1:8000/v1?a=1&b=2", "meta-llama/Llama-3.1-8B", "results/run#1"} {
		if _, err := Expand("x: ${V}", env(map[string]string{"V": v})); err != nil {
			t.Errorf("value %q refused: %v", v, err)
		}
	}
}
