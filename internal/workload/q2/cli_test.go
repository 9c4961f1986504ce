package q2_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload/workloadtest"
)

// TestQ2QuickOnEmbeddedStack runs Q2's quick scale through the CLI on its
// embedded pool: every policy runs, each gets its bench lines per class
// and its unified row, and the queue occupancy is reported from the
// gateway's queue-wait header.
func TestQ2QuickOnEmbeddedStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 25 s of traffic")
	}
	res := workloadtest.Run(t, 3*time.Minute, "Q2", workloadtest.Loose, "--quick")
	if res.Code != 0 || len(res.Runs) != 1 {
		t.Fatalf("exit %d, %d runs\nstdout:\n%s\nstderr:\n%s", res.Code, len(res.Runs), res.Stdout, res.Stderr)
	}
	res0 := res.Runs[0].Result
	for _, policy := range []string{"fifo", "priority", "slo_aware", "fair_share"} {
		if m, ok := res0.Metric(policy + ".llm_queue_busy"); !ok || !m.Measured() {
			t.Errorf("%s.llm_queue_busy not measured: %+v", policy, m)
		}
		if !strings.Contains(res.Bench, "BenchmarkQ2ControlMix/backend=sage/policy="+policy+"/type=llm/priority=critical ") {
			t.Errorf("bench.txt lacks the %s critical line", policy)
		}
		if !strings.Contains(res.Unified, `"config":"policy=`+policy+`"`) {
			t.Errorf("no unified row for %s", policy)
		}
	}
	checkAnswerNamesN(t, res0.Answer, res0)
	if !strings.Contains(res.Bench, "queue-p99-ms") || !strings.Contains(res.Stdout, "LLM queue busy") {
		t.Errorf("queue wait not measured:\n%s", res.Bench)
	}
}

// checkAnswerNamesN: every quantile the answer states — each policy's
// critical p99 TTFT — carries its sample size ("(n = 6)"), whatever its
// state (a p99 of a few requests is a bound, "≥ the max of n").
func checkAnswerNamesN(t *testing.T, answer string, res *result.Result) {
	t.Helper()
	for _, policy := range []string{"fifo", "priority", "slo_aware", "fair_share"} {
		m, ok := res.Metric(policy + ".critical_ttft_p99_ms")
		if !ok || m.N <= 0 {
			t.Errorf("%s.critical_ttft_p99_ms: %+v; want a quantile of n > 0 requests", policy, m)
			continue
		}
		if want := result.ShortN(m); !strings.Contains(answer, policy) || !strings.Contains(answer, want) {
			t.Errorf("the answer does not give %s's critical p99 TTFT with its n (%q):\n%s", policy, want, answer)
		}
	}
}
