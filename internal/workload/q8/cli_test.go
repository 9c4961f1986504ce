package q8_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill/drilltest"
	"github.com/sagebench/sagebench/internal/result"
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
	if lost, sent := res.Count("lost"), res.Count("sent"); lost != 0 || sent <= 0 {
		t.Errorf("lost %d; want 0 of > 0 sent (%d)", lost, sent)
	}
	if np := res.NotPerformed(); np != "" {
		t.Errorf("not comparable: %v", np)
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
	if !strings.Contains(res.Stdout, "primary lost: 0") || !strings.Contains(res.Stdout, "target met: lost 0") {
		t.Errorf("primary metric not printed as lost: 0, or its target:\n%s", res.Stdout)
	}
}

// TestQ8ReportsLostRequests: through the CLI, a stack that silently drops
// two responses makes the run report lost = 2 as its primary metric, and
// miss Q8's target (lost ≤ 0): exit 6.
func TestQ8ReportsLostRequests(t *testing.T) {
	body := drilltest.Loose + `q8:
  load: {schedule: {process: poisson, rate: 10, duration: 4s}}
  engines: []
  drill:
    events: [{at: 1s, action: drop, count: 2}]
    recovery: {metric: e2e_p99, bound: 5s, hold: 500ms}
`
	res := drilltest.Run(t, "Q8", body, 60*time.Second, "--quick")
	if res.Code != 6 {
		t.Fatalf("exit %d, want 6 (target missed)\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if res.Count("lost") != 2 || res.Count("lost_truncated") != 2 || !strings.Contains(res.Stdout, "primary lost: 2") ||
		!strings.Contains(res.Stdout, "target MISSED: lost 2, target <= 0") || !strings.Contains(res.Stderr, "target missed") {
		t.Fatalf("lost %d\n%s\n%s", res.Count("lost"), res.Stdout, res.Stderr)
	}
	if res.Run.Result == nil || !res.Run.Result.Missed() || !res.Run.Valid {
		t.Errorf("run.json result %+v: want a valid run whose target was missed", res.Run.Result)
	}
}

// TestQ8ExternalTargetExecHook: Q8 against an external target (a gateway
// in front of a `sagebench serve engine` process this test started) with
// an exec: hook that SIGKILLs that process; an event without a hook is
// reported as not performed and the run as not comparable (exit 5).
func TestQ8ExternalTargetExecHook(t *testing.T) {
	eng := drilltest.StartEngineProcess(t, "ext-0")
	gw := drilltest.StartGateway(t, "ext-0", eng.URL)
	body := drilltest.Loose + fmt.Sprintf(`q8:
  load: {schedule: {process: poisson, rate: 10, duration: 5s}}
  drill:
    events: [{at: 1s, action: kill, engine: ext-0}, {at: 2s, action: pause, engine: llm-1, duration: 1s}]
    hooks:
      kill: {exec: [kill, -KILL, "%d"]}
    recovery: {metric: e2e_p99, bound: 5s, hold: 500ms}
`, eng.Process.Pid)
	res := drilltest.Run(t, "Q8", body, 60*time.Second, "--quick", "--target", gw.URL())
	if res.Code != 5 {
		t.Fatalf("exit %d, want 5 (not comparable)\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	select {
	case <-eng.Exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the engine process survived the hook")
	}
	if len(res.Events) < 1 || res.Events[0]["via"] != "exec" || res.Events[0]["outcome"] != "ok" || res.Events[0]["exit_status"] != 0.0 {
		t.Errorf("kill event %v", res.Events)
	}
	if np := res.NotPerformed(); strings.Count(np, "llm-1 at") != 2 { // pause and its resume
		t.Errorf("not performed %q: want the pause and its resume", np)
	}
	if res.Count("lost") != 0 {
		t.Errorf("lost %d", res.Count("lost"))
	}
	if m := res.Metric("rss_drift_mib_per_min"); m.State == result.NotMeasurable && strings.Contains(m.Reason, "not sampled") {
		t.Errorf("no RSS samples from the target's /metrics: %+v", m)
	}
	if !strings.Contains(strings.Join(res.Run.InvalidReasons, " "), "not comparable") {
		t.Errorf("invalid reasons %v", res.Run.InvalidReasons)
	}
}
