package q6_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/workload/workloadtest"
)

// TestQ6QuickOnEmbeddedStack runs Q6's quick scale through the CLI on the
// embedded stack: every policy runs, the primary metric is printed, and
// the records carry the burst metrics per policy.
func TestQ6QuickOnEmbeddedStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 30 s of traffic")
	}
	res := workloadtest.Run(t, 3*time.Minute, "Q6", workloadtest.Loose, "--quick")
	if res.Code != 0 || len(res.Runs) != 1 {
		t.Fatalf("exit %d, %d runs\nstdout:\n%s\nstderr:\n%s", res.Code, len(res.Runs), res.Stdout, res.Stderr)
	}
	run := res.Runs[0]
	if !strings.Contains(res.Stdout, "primary high_burst_slo_attainment:") || run.Result.Primary.Name != "high_burst_slo_attainment" {
		t.Errorf("primary not printed or recorded: %+v\n%s", run.Result.Primary, res.Stdout)
	}
	for _, policy := range []string{"fifo", "priority", "slo_aware"} {
		if m, ok := run.Result.Metric(policy + ".high_burst_slo_attainment"); !ok || !m.Measured() {
			t.Errorf("%s.high_burst_slo_attainment not measured: %+v", policy, m)
		}
		if !strings.Contains(res.Bench, "BenchmarkQ6BurstTown/backend=sage/policy="+policy+"/window=burst/priority=high ") {
			t.Errorf("bench.txt lacks the %s burst/high line:\n%s", policy, res.Bench)
		}
		if !strings.Contains(res.Unified, `"config":"policy=`+policy+`"`) {
			t.Errorf("no unified row for policy %s", policy)
		}
	}
	if !strings.Contains(res.Stdout, "Burst and base windows") {
		t.Errorf("summary sections not printed:\n%s", res.Stdout)
	}
}
