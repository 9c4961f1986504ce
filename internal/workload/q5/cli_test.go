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
	if res.Drill.Lost.Lost != 0 || res.Drill.Lost.Sent == 0 {
		t.Errorf("lost %+v; want 0 of > 0 sent", res.Drill.Lost)
	}
	if len(res.Events) != 1 || res.Events[0]["action"] != "kill" || res.Events[0]["outcome"] != "ok" {
		t.Errorf("events %v", res.Events)
	}
	for _, want := range []string{"recovery_time:", "SAGE target", "urgent LLM requests on fast engines"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Stdout)
		}
	}
	x := res.Run.Summary.Extra
	if x["killed_share"] <= 0 || x["killed_share"] >= 1 || x["ideal_fast_share"] <= 0 {
		t.Errorf("extra %v", x)
	}
}
