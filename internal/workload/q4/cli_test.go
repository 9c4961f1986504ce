package q4_test

import (
	"strings"
	"testing"
	"time"

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
	for _, key := range []string{"engines=1.max_rate", "engines=2.max_rate", "engines=4.max_rate"} {
		m, ok := res0.Metric(key)
		if !ok || (m.Interval == nil || !(m.Interval[0] > 0)) && !strings.Contains(m.Reason, "driver-bound") {
			t.Errorf("no frontier at %s: %+v\n%s", key, m, res.Stdout)
		}
	}
	if !strings.Contains(res.Stdout, "primary scaling_efficiency:") || !strings.Contains(res.Stdout, "Frontier") {
		t.Errorf("efficiency or frontier table not printed:\n%s", res.Stdout)
	}
	if !strings.Contains(res.Bench, "BenchmarkQ4ScaleFrontier/backend=sage/engines=1 ") || !strings.Contains(res.Unified, `"config":"engines=2"`) {
		t.Errorf("bench line for engines=1 or unified row for engines=2 missing:\n%s", res.Bench)
	}
}
