package q7_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill/drilltest"
	"github.com/sagebench/sagebench/internal/result"
)

func TestMain(m *testing.M) { drilltest.Main(m) }

// TestQ7QuickOnEmbeddedStack runs `sagebench run -e Q7 --quick` on the
// embedded stack at a fixed, low rate (no disturbance to speak of): policy
// switch, engine added, a process engine drained and removed under load.
// No request fails or is lost, and every event reads "never violated" —
// not a recovery time the size of a window.
func TestQ7QuickOnEmbeddedStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 23 s drill")
	}
	start := time.Now()
	res := drilltest.Run(t, "Q7", drilltest.Loose, 90*time.Second, "--quick", "--rate", "8")
	t.Logf("wall %v\n%s", time.Since(start).Round(time.Second), res.Stdout)
	if res.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if lost, sent := res.Count("lost"), res.Count("sent"); lost != 0 || sent <= 0 {
		t.Errorf("lost %d; want 0 of > 0 sent (%d)", lost, sent)
	}
	var actions []string
	for _, e := range res.Events {
		if e["outcome"] != "ok" {
			t.Errorf("event %v", e)
		}
		actions = append(actions, e["action"].(string))
	}
	if got := strings.Join(actions, ","); got != "policy,add,drain,remove" {
		t.Errorf("events %s", got)
	}
	for _, e := range res.Run.Result.Events {
		rec, ok := metric(e.Metrics, "recovery_ms")
		if !ok || rec.State != result.Measured || rec.Value != 0 || !strings.HasPrefix(rec.Reason, "no violation") {
			t.Errorf("event %d %s: recovery %+v; want 0, no violation", e.Seq, e.Action, rec)
		}
	}
	if !strings.Contains(res.Stdout, "primary failed_by_reconfig:") {
		t.Errorf("primary metric not printed:\n%s", res.Stdout)
	}
	if got, bg := res.Count("failed_by_reconfig"), res.Count("background_failures"); got+bg != res.Run.Summary.Failed {
		t.Errorf("failed_by_reconfig %d + background %d ≠ failed %d: every failure is counted once", got, bg, res.Run.Summary.Failed)
	}
	if c := res.Metric("capacity_rps"); c.State != "" {
		t.Errorf("capacity %+v: --rate fixes the rate, no probe", c)
	}
}

func metric(ms []result.Metric, name string) (result.Metric, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return result.Metric{}, false
}
