package drilltest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack"
)

// EngineProcess is a `sagebench serve engine` process a test started.
type EngineProcess struct {
	*exec.Cmd
	URL    string
	Exited chan struct{} // closed when it has exited (ProcessState is then set)
}

// StartEngineProcess runs `sagebench serve engine` (this test binary as
// the CLI; the test's TestMain must call Main) with an H100 LLM profile
// on a free loopback port. It is killed when the test ends.
func StartEngineProcess(t *testing.T, id string) *EngineProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "engine", "--profile", "llama3.1-8b-h100", "--kind", "llm",
		"--listen", "127.0.0.1:0", "--id", id)
	cmd.Env = append(os.Environ(), ChildEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &EngineProcess{Cmd: cmd, Exited: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), stack.ListenLine); ok {
				urls <- u
			}
		}
		_ = cmd.Wait()
		close(p.Exited)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.Exited })
	select {
	case p.URL = <-urls:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("engine process did not print its listening line")
	}
	return nil
}

// StartGateway starts a reference stack on loopback whose engines are
// the remote LLM engine at engineURL (id remoteID), an in-process LLM
// engine llm-1 and an embedder embed-0 — an external target from a
// drill's point of view. It is closed when the test ends.
func StartGateway(t *testing.T, remoteID, engineURL string) *stack.Stack {
	t.Helper()
	cfg := stack.Config{Listen: "127.0.0.1:0", Policy: "fifo", Health: stack.HealthConfig{Interval: 100 * time.Millisecond},
		Engines: []stack.EngineConfig{
			{ID: remoteID, Kind: "llm", URL: engineURL, Model: "meta-llama/Llama-3.1-8B-Instruct"},
			{ID: "llm-1", Kind: "llm", Profile: "llama3.1-8b-h100"},
			{ID: "embed-0", Kind: "embedding", Profile: "bge-small-cpu"},
		}}
	s, err := stack.Start(context.Background(), cfg, stack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}
