package q8_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill/drilltest"
)

func TestMain(m *testing.M) { drilltest.Main(m) }

// TestQ8QuickOnEmbeddedStack runs `sagebench run -e Q8 --quick` on the
// embedded stack: its engines are child processes that get SIGKILLed and
// restarted, SIGSTOPped and resumed, and slowed down; no request is lost.
func TestQ8QuickOnEmbeddedStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 27 s soak")
	}
	res := drilltest.Run(t, "Q8", drilltest.Loose, 90*time.Second, "--quick")
	if res.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	t.Logf("\n%s", res.Stdout)
	if res.Drill.Lost.Lost != 0 || res.Drill.Lost.Sent == 0 {
		t.Errorf("lost %+v; want 0 of > 0 sent", res.Drill.Lost)
	}
	if !res.Drill.Comparable {
		t.Errorf("not comparable: %v", res.Drill.NotPerformed)
	}
	seen := map[string]bool{}
	for _, e := range res.Events {
		if e["outcome"] != "ok" {
			t.Errorf("event %v", e)
		}
		seen[e["action"].(string)] = true
	}
	for _, a := range []string{"kill", "restart", "pause", "resume", "slowdown"} {
		if !seen[a] {
			t.Errorf("no %s event in events.jsonl", a)
		}
	}
	if len(res.Windows) == 0 {
		t.Error("windows.jsonl is empty")
	}
	if !strings.Contains(res.Stdout, "lost: 0 requests") {
		t.Errorf("primary metric not printed as lost: 0 requests:\n%s", res.Stdout)
	}
}
