package drill_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill/drilltest"
	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/target"
)

func TestMain(m *testing.M) { drilltest.Main(m) }

type engineProcess struct {
	*exec.Cmd
	exited chan struct{}
}

// startEngineProcess runs `sagebench serve engine` (this test binary as
// the CLI) on a free loopback port and returns it with its URL.
func startEngineProcess(t *testing.T) (*engineProcess, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "engine", "--profile", "llama3.1-8b-h100", "--kind", "llm",
		"--listen", "127.0.0.1:0", "--id", "ext-0")
	cmd.Env = append(os.Environ(), drilltest.ChildEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &engineProcess{Cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.exited })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), stack.ListenLine); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return p, u
	case <-time.After(30 * time.Second):
		t.Fatal("engine process did not print its listening line")
	}
	return nil, ""
}

func waitExit(p *engineProcess) <-chan struct{} { return p.exited }

// openGateway starts a reference stack whose engines are the remote
// engine at url and an in-process one, and opens it as a URL target.
func openGateway(t *testing.T, url string) *target.Target {
	t.Helper()
	cfg := stack.Config{Listen: "127.0.0.1:0", Policy: "fifo", Health: stack.HealthConfig{Interval: 100 * time.Millisecond},
		Engines: []stack.EngineConfig{
			{ID: "ext-0", Kind: "llm", URL: url, Model: "meta-llama/Llama-3.1-8B-Instruct"},
			{ID: "llm-1", Kind: "llm", Profile: "llama3.1-8b-h100"},
			{ID: "embed-0", Kind: "embedding", Profile: "bge-small-cpu"},
		}}
	s, err := stack.Start(t.Context(), cfg, stack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	tg, err := target.Open(t.Context(), target.Config{URL: s.URL()}, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(context.Background()) })
	return tg
}
