package stack_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack"
)

// startSplit runs cfg split: engines and gateway as children of this test
// binary (TestMain serves them), the proxy in this process.
func startSplit(t *testing.T, cfg stack.Config) *stack.Split {
	t.Helper()
	t.Setenv(childEnv, "1")
	cfg.Topology, cfg.Listen = stack.TopologySplit, "127.0.0.1:0"
	s, err := stack.StartSplit(t.Context(), cfg, stack.Options{EngineBinary: os.Args[0], EngineStderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// streams sends n streamed chat completions at once and returns their
// outcomes once all have ended.
func streams(client *http.Client, url string, n int) []outcome {
	out := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = streamOutcome(client, url) }()
	}
	wg.Wait()
	return out
}

func count(os []outcome, f func(outcome) bool) int {
	n := 0
	for _, o := range os {
		if f(o) {
			n++
		}
	}
	return n
}

// TestSplitStack: every part of the split stack is its own process
// behind the proxy. Killing the gateway's process cuts the streams it
// carried (lost, from the client's side) and the proxy answers 502 while
// it is down; restarted on its address, it serves again. Cutting the
// proxy's connections cuts the streams in flight. Close leaves no process.
func TestSplitStack(t *testing.T) {
	cfg := stack.Config{Policy: "fifo", Engines: []stack.EngineConfig{{ID: "llm-0", Kind: "llm", Profile: "llama3.1-8b-a10g", Slots: 8}},
		Health: stack.HealthConfig{Interval: 100 * time.Millisecond}}
	s := startSplit(t, cfg)
	client := newClient()
	if o := streamOutcome(client, s.URL()); !o.ok {
		t.Fatalf("through the proxy: %+v", o)
	}
	gw, err := s.Process(stack.GatewayID)
	eng, err2 := s.Process("llm-0")
	if err != nil || err2 != nil || gw == eng || gw == os.Getpid() {
		t.Fatalf("gateway pid %d (%v), engine pid %d (%v)", gw, err, eng, err2)
	}

	// A slow engine: 60 tokens take ~2 s, so the streams are in flight.
	done := make(chan []outcome)
	go func() { done <- streams(client, s.URL(), 4) }()
	time.Sleep(700 * time.Millisecond)
	if err := s.Kill(stack.GatewayID); err != nil {
		t.Fatal(err)
	}
	if lost := count(<-done, func(o outcome) bool { return o.lost }); lost == 0 {
		t.Error("killing the gateway lost no stream in flight")
	}
	resp, err := client.Post(s.URL()+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"x"}]}`))
	if err != nil || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("gateway down: %v %v; want 502 from the proxy", resp, err)
	}
	resp.Body.Close()
	if err := s.Restart(t.Context(), stack.GatewayID); err != nil {
		t.Fatal(err)
	}
	if o := streamOutcome(client, s.URL()); !o.ok {
		t.Fatalf("after the gateway's restart: %+v", o)
	}

	go func() { done <- streams(client, s.URL(), 4) }()
	time.Sleep(700 * time.Millisecond)
	if n, err := s.Cut(); err != nil || n == 0 {
		t.Fatalf("cut %d connections (%v)", n, err)
	}
	if lost := count(<-done, func(o outcome) bool { return o.lost }); lost == 0 {
		t.Error("the cut lost no stream in flight")
	}

	gw, _ = s.Process(stack.GatewayID)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{gw, eng} {
		if st := procState(pid); st != "" && st != "Z" {
			t.Errorf("process %d still there (%s) after Close", pid, st)
		}
	}
}

// TestSplitTopologyValidates: a split stack cannot name an engine
// "gateway", and the topology must be known.
func TestSplitTopologyValidates(t *testing.T) {
	cfg := stack.DefaultConfig()
	cfg.Topology = "mesh"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "topology") {
		t.Errorf("topology mesh: %v", err)
	}
	cfg.Topology, cfg.Engines[0].ID = stack.TopologySplit, stack.GatewayID
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "names the gateway") {
		t.Errorf("engine named gateway: %v", err)
	}
}
