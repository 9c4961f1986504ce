package q4_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload/workloadtest"
)

// TestQ4QuickOnEmbeddedStack runs Q4's quick scale through the CLI on the
// embedded stack, three repetitions (--repeat 3) of scales 1 and 2 (the
// three scales of quick thrice took 211 s at load 3–5 on 2 cores: too
// slow for CI): the pool is resized to 2 engines through the admin API, every scale is reported (a
// bracket, or driver-bound on a loaded machine), the efficiency is
// printed, and the repetitions' brackets overlap pairwise — a bracket may
// be wide or open (a probe left undecided on a loaded machine), never
// wrong, so two of the same target must share a rate.
func TestQ4QuickOnEmbeddedStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs up to 3 × 20 s of traffic")
	}
	// The probe's own driver check is loosened like the run's: this
	// machine is shared.
	start := time.Now()
	res := workloadtest.Run(t, 6*time.Minute, "Q4", workloadtest.Loose+"q4: {max_driver_lag: 60s, scales: [1, 2]}\n", "--quick", "--repeat", "3")
	t.Logf("quick Q4 --repeat 3: %v wall, load average %.1f", time.Since(start).Round(time.Second), record.LoadAverage())
	if res.Code != 0 || len(res.Runs) != 3 {
		t.Fatalf("exit %d, %d runs\nstdout:\n%s\nstderr:\n%s", res.Code, len(res.Runs), res.Stdout, res.Stderr)
	}
	for _, run := range res.Runs {
		checkScales(t, run.Result, res.Stdout)
	}
	keys := []string{"engines=1.max_rate", "engines=2.max_rate", "scaling_efficiency"}
	for _, key := range keys {
		for i := range res.Runs {
			for j := i + 1; j < len(res.Runs); j++ {
				a, _ := res.Runs[i].Result.Metric(key)
				b, _ := res.Runs[j].Result.Metric(key)
				t.Logf("%s: repetition %d %s, %d %s", key, i, result.Format(a), j, result.Format(b))
				if !overlap(a, b) {
					t.Errorf("%s: repetitions %d and %d disjoint: %s and %s", key, i, j, result.Format(a), result.Format(b))
				}
			}
		}
	}
	if !strings.Contains(res.Stdout, "primary scaling_efficiency:") || !strings.Contains(res.Stdout, "Frontier") || !strings.Contains(res.Unified, `"config":"engines=2"`) {
		t.Errorf("efficiency, frontier table or unified row for engines=2 missing:\n%s", res.Stdout)
	}
}

// overlap reports whether a and b share a value: false only when both
// state a bracket or a measured interval and those are disjoint (a
// metric not measurable bounds nothing).
func overlap(a, b result.Metric) bool {
	if a.Interval == nil || b.Interval == nil {
		return true
	}
	return max(a.Interval[0], b.Interval[0]) <= min(a.Interval[1], b.Interval[1])
}

// checkScales: every scale is reported, and on a machine not past its
// cores a rate passed at each.
func checkScales(t *testing.T, res0 *result.Result, stdout string) {
	t.Helper()
	// A probe that cannot decide bounds nothing, so on a loaded machine
	// (service times several times their idle value) a scale may end with
	// no rate passed: an honest answer, which the test accepts only when
	// the machine is that loaded.
	passed := 0
	for _, key := range []string{"engines=1.max_rate", "engines=2.max_rate"} {
		m, ok := res0.Metric(key)
		switch {
		case !ok || m.Check() != nil:
			t.Errorf("%s missing or broken: %+v", key, m)
		case m.Interval != nil && m.Interval[0] > 0 || strings.Contains(m.Reason, "driver-bound"):
			passed++
		default:
			t.Logf("no rate passed at %s: %s", key, result.Format(m))
		}
	}
	// The quick rule judges a p75 on ~15 requests a probe, so one late
	// first token in 15 leaves it undecided: with other processes on the
	// cores (a CI run's parallel packages: load 3 on 2 cores left n = 1
	// undecided) that is the honest answer.
	if passed < 2 && record.LoadAverage() < float64(runtime.NumCPU()) {
		t.Errorf("a scale without a passing rate on a machine of load average %.1f:\n%s", record.LoadAverage(), stdout)
	}
}
