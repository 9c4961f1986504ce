package q5_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill/drilltest"
)

func TestMain(m *testing.M) { drilltest.Main(m) }

// TestQ5QuickOnEmbeddedStack runs `sagebench run -e Q5 --quick` on the
// embedded stack's heterogeneous pool of engine processes, SIGKILLs the
// fast engine mid-run and checks the process is gone, nothing is lost and
// the primary metrics are printed.
func TestQ5QuickOnEmbeddedStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 24 s drill")
	}
	res := drilltest.Run(t, "Q5", drilltest.Loose, 90*time.Second, "--quick")
	if res.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	t.Logf("\n%s", res.Stdout)
	if lost, sent := res.Count("lost"), res.Count("sent"); lost != 0 || sent <= 0 {
		t.Errorf("lost %d; want 0 of > 0 sent (%d)", lost, sent)
	}
	if len(res.Events) != 1 || res.Events[0]["action"] != "kill" || res.Events[0]["outcome"] != "ok" {
		t.Errorf("events %v", res.Events)
	}
	for _, want := range []string{"primary recovery_s:", "target met: recovery_s", "urgent requests on fast engines"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Stdout)
		}
	}
	if k, i := res.Metric("killed_share"), res.Metric("ideal_fast_share"); !(k.Value > 0 && k.Value < 1) || !(i.Value > 0) {
		t.Errorf("killed_share %+v, ideal_fast_share %+v", k, i)
	}
}
