package q8_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill/drilltest"
	"github.com/sagebench/sagebench/internal/result"
)

func TestMain(m *testing.M) { drilltest.Main(m) }

// TestQ8QuickOnEmbeddedStack runs `sagebench run -e Q8 --quick` on the
// embedded stack, split so that every part is its own process behind the
// harness's proxy: after the capacity probe, an engine is SIGKILLed and
// restarted, SIGSTOPped and resumed, slowed down; every connection is
// cut at the proxy; the gateway's process is SIGKILLed and restarted.
// The cut and the gateway's kill lose the streams they carried, so lost
// is above 0 by class and the run misses Q8's target (exit 6). The load
// is half the measured capacity (not 0.7) so that a busy shared host does
// not void the steady state the drill starts from.
func TestQ8QuickOnEmbeddedStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 26 s soak")
	}
	start := time.Now()
	res := drilltest.Run(t, "Q8", drilltest.Loose+"q8: {load: {utilisation: 0.5}}\n", 90*time.Second, "--quick")
	t.Logf("wall %v\n%s", time.Since(start).Round(time.Second), res.Stdout)
	if res.Code != 6 {
		t.Fatalf("exit %d, want 6 (lost > 0 misses the target)\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	lost, sent := res.Count("lost"), res.Count("sent")
	byClass := res.Count("lost_truncated") + res.Count("lost_dropped_after_send") + res.Count("lost_reset") + res.Count("lost_timeout") + res.Count("lost_canceled") + res.Count("lost_no_record")
	if lost <= 0 || sent <= 0 || byClass != lost {
		t.Errorf("lost %d of %d sent, %d by class; want > 0, all classified", lost, sent, byClass)
	}
	if np := res.NotPerformed(); np != "" {
		t.Errorf("not comparable: %v", np)
	}
	seen := map[string]bool{}
	for _, e := range res.Events {
		if e["outcome"] != "ok" {
			t.Errorf("event %v", e)
		}
		seen[e["action"].(string)+" "+e["target"].(string)] = true
	}
	for _, a := range []string{"kill llm-1", "restart llm-1", "pause llm-1", "resume llm-1", "slowdown llm-1", "cut connections", "kill gateway", "restart gateway"} {
		if !seen[a] {
			t.Errorf("no %s event in events.jsonl", a)
		}
	}
	if c := res.Metric("capacity_rps"); c.State != result.Measured && c.State != result.Bound {
		t.Errorf("capacity %+v", c)
	}
	if len(res.Windows) == 0 {
		t.Error("windows.jsonl is empty")
	}
	if !strings.Contains(res.Stdout, "primary lost: ") || !strings.Contains(res.Stdout, "target MISSED: lost") {
		t.Errorf("primary metric or its missed target not printed:\n%s", res.Stdout)
	}
}

// TestQ8ReportsLostRequests: through the CLI, a stack that silently drops
// two responses makes the run report lost = 2 as its primary metric, and
// miss Q8's target (lost ≤ 0): exit 6.
func TestQ8ReportsLostRequests(t *testing.T) {
	body := drilltest.Loose + `q8:
  load: {schedule: {process: poisson, rate: 10, duration: 4s}, utilisation: 0}
  engines: []
  drill:
    events: [{at: 1s, action: drop, count: 2}]
    recovery: {metric: e2e_p99, bound: 5s, hold: 1s}
    series: {width: 150ms, step: 50ms}
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
  load: {schedule: {process: poisson, rate: 10, duration: 5s}, utilisation: 0}
  drill:
    events: [{at: 1s, action: kill, engine: ext-0}, {at: 2s, action: pause, engine: llm-1, duration: 1s}]
    hooks:
      kill: {exec: [kill, -KILL, "%d"]}
    recovery: {metric: e2e_p99, bound: 5s, hold: 1s}
    series: {width: 150ms, step: 50ms}
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

// TestQ8ExternalDrillScript runs the documented external-target drill
// (config/external-drill): a `sagebench serve` started by server.sh in a
// session of its own, faulted through exec hooks calling server.sh —
// killed and restarted (a new process, the pid file says), paused and
// resumed, slowed down ×4 and back to full speed — at a fixed rate.
func TestQ8ExternalDrillScript(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 20 s soak")
	}
	for _, tool := range []string{"bash", "setsid", "curl", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("server.sh needs %s: %v", tool, err)
		}
	}
	dir, err := filepath.Abs("../../../config/external-drill")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	run := t.TempDir()
	t.Setenv(drilltest.ChildEnv, "1") // the server is this test binary as sagebench
	t.Setenv("DRILL_DIR", dir)
	t.Setenv("DRILL_RUN_DIR", run)
	t.Setenv("DRILL_SERVER_CMD", fmt.Sprintf("%s serve --config %s/stack.yaml --listen 127.0.0.1:%d", os.Args[0], dir, port))
	t.Setenv("DRILL_HEALTH_URL", url+"/health")
	script := filepath.Join(dir, "server.sh")
	if out, err := exec.Command(script, "start").CombinedOutput(); err != nil {
		t.Fatalf("server.sh start: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(script, "stop").Run() })
	pid0, _ := os.ReadFile(filepath.Join(run, "server.pid"))
	body, err := os.ReadFile(filepath.Join(dir, "q8.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res := drilltest.Run(t, "Q8", drilltest.Loose+string(body), 90*time.Second, "--quick", "--rate", "20", "--duration", "20s", "--target", url)
	t.Logf("\n%s", res.Stdout)
	if res.Code != 0 && res.Code != 6 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var got []string
	for _, e := range res.Events {
		if e["outcome"] != "ok" || e["via"] != "exec" {
			t.Errorf("event %v", e)
		}
		got = append(got, fmt.Sprintf("%s:%v", e["action"], e["output"]))
	}
	want := "kill:killed,restart:started,pause:paused,resume:resumed,slowdown:slowed down x4,slowdown:full speed"
	if s := strings.Join(got, ","); !strings.HasPrefix(strings.ReplaceAll(s, ": ", ":"), "kill:killed,restart:started") ||
		!strings.Contains(s, "slowdown:slowed down x4,slowdown:full speed") {
		t.Errorf("events %s\nwant %s", s, want)
	}
	if pid1, _ := os.ReadFile(filepath.Join(run, "server.pid")); string(pid1) == string(pid0) {
		t.Errorf("the restart kept pid %s", pid0)
	}
	if out, err := exec.Command(script, "status").CombinedOutput(); err != nil {
		t.Errorf("the server is not running after the drill: %s", out)
	}
}
