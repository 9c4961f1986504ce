package stack

import (
	"os"
	"slices"
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

// TestChildCountsWithItsKindsTokenizer: an LLM engine process is given
// the config's tokenizer, an embedder process its embedding_tokenizer
// (none: it counts words).
func TestChildCountsWithItsKindsTokenizer(t *testing.T) {
	for _, tc := range []struct {
		name, kind, tok, embed, want string
	}{
		{"llm", "llm", "o200k_base", "bert.json", "o200k_base"},
		{"embedder", "embedding", "o200k_base", "bert.json", "bert.json"},
		{"embedder without one", "embedding", "o200k_base", "", ""},
		{"llm default", "llm", "", "bert.json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := childArgs(Options{tokenizer: tc.tok, embedTokenizer: tc.embed}, EngineConfig{ID: "e", Kind: tc.kind, Profile: "p"}, 1, "127.0.0.1:0")
			got := ""
			if i := slices.Index(args, "--tokenizer"); i >= 0 && i+1 < len(args) {
				got = args[i+1]
			}
			if got != tc.want {
				t.Errorf("--tokenizer %q, want %q (args %q)", got, tc.want, args)
			}
		})
	}
}
