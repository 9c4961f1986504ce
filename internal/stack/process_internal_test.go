package stack

import (
	"os"
	"syscall"
	"testing"
)

// TestStopEndsAPausedChild: stopping a SIGSTOPped engine process (a pause
// drill still in force at shutdown) lets it handle SIGTERM and exit
// gracefully instead of sitting stopped until the SIGKILL fallback.
func TestStopEndsAPausedChild(t *testing.T) {
	t.Setenv("SAGEBENCH_STACK_TEST_CHILD", "1") // TestMain (stack_test.go) serves the engine
	c, err := startChild(t.Context(), Options{EngineBinary: os.Args[0]},
		EngineConfig{ID: "p0", Kind: "llm", Profile: "llama3.1-8b-h100"}, 1, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	c.stop()
	ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		t.Fatalf("paused child ended with %v; want a graceful exit on SIGTERM", c.cmd.ProcessState)
	}
}
