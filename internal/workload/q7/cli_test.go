package q7_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill/drilltest"
)

func TestMain(m *testing.M) { drilltest.Main(m) }

// TestQ7QuickOnEmbeddedStack runs `sagebench run -e Q7 --quick` on the
// embedded stack: policy switch, engine added, a process engine drained
// and removed under load; no request fails or is lost.
func TestQ7QuickOnEmbeddedStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 24 s drill")
	}
	res := drilltest.Run(t, "Q7", drilltest.Loose, 90*time.Second, "--quick")
	if res.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	t.Logf("\n%s", res.Stdout)
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
	if !strings.Contains(res.Stdout, "primary failed_by_reconfig:") {
		t.Errorf("primary metric not printed:\n%s", res.Stdout)
	}
	if got := res.Count("failed_by_reconfig"); got != res.Run.Summary.Failed {
		t.Errorf("failed_by_reconfig %v, failed %d: every failure must be attributed", got, res.Run.Summary.Failed)
	}
}
