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
// embedded stack: the pool is resized to 2 and 4 engines through the
// admin API, every scale is reported (a bracket, or driver-bound on a
// loaded machine), and the efficiency is printed.
func TestQ4QuickOnEmbeddedStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs up to 20 s of traffic")
	}
	// The probe's own driver check is loosened like the run's: this
	// machine is shared.
	start := time.Now()
	res := workloadtest.Run(t, 3*time.Minute, "Q4", workloadtest.Loose+"q4: {max_driver_lag: 60s}\n", "--quick")
	t.Logf("quick Q4: %v wall", time.Since(start).Round(time.Second))
	if res.Code != 0 || len(res.Runs) != 1 {
		t.Fatalf("exit %d, %d runs\nstdout:\n%s\nstderr:\n%s", res.Code, len(res.Runs), res.Stdout, res.Stderr)
	}
	res0 := res.Runs[0].Result
	// A probe that cannot decide bounds nothing, so on a loaded machine
	// (service times several times their idle value) a scale may end with
	// no rate passed: an honest answer, which the test accepts only when
	// the machine is that loaded.
	passed := 0
	for _, key := range []string{"engines=1.max_rate", "engines=2.max_rate", "engines=4.max_rate"} {
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
	if passed < 3 && record.LoadAverage() < float64(runtime.NumCPU()) {
		t.Errorf("a scale without a passing rate on a machine of load average %.1f:\n%s", record.LoadAverage(), res.Stdout)
	}
	if !strings.Contains(res.Stdout, "primary scaling_efficiency:") || !strings.Contains(res.Stdout, "Frontier") || !strings.Contains(res.Unified, `"config":"engines=2"`) {
		t.Errorf("efficiency, frontier table or unified row for engines=2 missing:\n%s", res.Stdout)
	}
}
