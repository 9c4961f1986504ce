package stack_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack"
)

// childEnv makes the test binary act as `sagebench serve engine`, so
// process engines start without building the binary (the CLI command
// itself is tested in internal/cli).
const childEnv = "SAGEBENCH_STACK_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(serveEngineChild(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// serveEngineChild serves one simulated engine like `sagebench serve
// engine --profile P --kind K --listen A --seed S --id ID`, or a stack like
// `sagebench serve --config F --listen A` (a split stack's gateway), until
// SIGTERM.
func serveEngineChild(args []string) int {
	if len(args) >= 2 && args[0] == "serve" && args[1] == "--config" {
		return serveGatewayChild(args[1:])
	}
	if len(args) < 2 || args[0] != "serve" || args[1] != "engine" {
		fmt.Fprintf(os.Stderr, "child: unexpected args %q\n", args)
		return 2
	}
	fs := flag.NewFlagSet("engine", flag.ContinueOnError)
	profile, kind := fs.String("profile", "", ""), fs.String("kind", "", "")
	listen, id := fs.String("listen", "127.0.0.1:0", ""), fs.String("id", "", "")
	seed := fs.Int64("seed", 1, "")
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	return serveUntilSignal(stack.Config{Listen: *listen, Policy: "fifo", Seed: *seed,
		Engines: []stack.EngineConfig{{ID: *id, Kind: *kind, Profile: *profile, Seed: *seed}}})
}

// serveGatewayChild serves the stack of --config on --listen.
func serveGatewayChild(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	path, listen := fs.String("config", "", ""), fs.String("listen", "127.0.0.1:0", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := stack.LoadConfig(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg.Listen = *listen
	return serveUntilSignal(cfg)
}

// serveUntilSignal serves cfg, prints its listening line and stops on
// SIGTERM, like `sagebench serve`.
func serveUntilSignal(cfg stack.Config) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := stack.Start(ctx, cfg, stack.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(stack.ListenLine + s.URL())
	<-ctx.Done()
	if err := s.Close(context.Background()); err != nil {
		return 1
	}
	return 0
}

func startStack(t *testing.T, cfg stack.Config, opts stack.Options) *stack.Stack {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	s, err := stack.Start(t.Context(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestDefaultStackEndToEnd runs the default pool with real simulated
// engines and index: streamed chat, embeddings, retrieval, admin, drills.
func TestDefaultStackEndToEnd(t *testing.T) {
	cfg := stack.DefaultConfig()
	cfg.Index.Size = 300
	s := startStack(t, cfg, stack.Options{})
	resp, body := post(t, s.URL()+"/v1/chat/completions",
		`{"model":"meta-llama/Llama-3.1-8B-Instruct","messages":[{"role":"user","content":"tell me"}],"max_tokens":8,"stream":true,"stream_options":{"include_usage":true}}`)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("X-Engine-Id"), "llm-") {
		t.Fatalf("chat: %d %s", resp.StatusCode, body)
	}
	chunks := strings.Count(string(body), `"object":"chat.completion.chunk"`)
	if chunks != 8+2 || !strings.Contains(string(body), `"completion_tokens":8`) || !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		t.Fatalf("stream has %d chunks (want 8 tokens + finish + usage): %s", chunks, body)
	}

	// An embedding of a corpus document's text finds that document first.
	resp, body = post(t, s.URL()+"/v1/retrieve", `{"input":"probe text","top_k":3}`)
	var hits struct {
		Data []struct {
			ID    int     `json:"id"`
			Score float32 `json:"score"`
			Text  string  `json:"text"`
		} `json:"data"`
		Model string `json:"model"`
	}
	if err := json.Unmarshal(body, &hits); err != nil || resp.StatusCode != 200 || len(hits.Data) != 3 {
		t.Fatalf("retrieve by input: %d %s", resp.StatusCode, body)
	}
	doc := hits.Data[0].Text
	resp, body = post(t, s.URL()+"/v1/embeddings", fmt.Sprintf(`{"input":%q}`, doc))
	var emb struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &emb); err != nil || resp.StatusCode != 200 || len(emb.Data) != 1 {
		t.Fatalf("embeddings: %d %s", resp.StatusCode, body)
	}
	vec, _ := json.Marshal(emb.Data[0].Embedding)
	resp, body = post(t, s.URL()+"/v1/retrieve", fmt.Sprintf(`{"embedding":%s,"top_k":1}`, vec))
	if err := json.Unmarshal(body, &hits); err != nil || resp.StatusCode != 200 || hits.Data[0].Text != doc || hits.Data[0].Score < 0.99 {
		t.Fatalf("retrieve by the document's own embedding: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, s.URL()+"/v1/retrieve", `{"embedding":[1,2,3]}`); resp.StatusCode != 400 || !strings.Contains(string(body), "dimensions") {
		t.Fatalf("wrong dimension: %d %s", resp.StatusCode, body)
	}

	// Admin: add an engine from a profile, drill the in-process ones.
	resp, body = post(t, s.URL()+"/admin/engines", `{"id":"llm-2","kind":"llm","profile":"llama3.1-8b-a10g"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("add engine: %d %s", resp.StatusCode, body)
	}
	if resp, body = post(t, s.URL()+"/admin/engines", `{"id":"llm-3","kind":"llm","profile":"no-such-profile"}`); resp.StatusCode != 400 || !strings.Contains(string(body), "no-such-profile") {
		t.Fatalf("unknown profile: %d %s", resp.StatusCode, body)
	}
	d, err := s.Drill("llm-2")
	if err != nil {
		t.Fatal(err)
	}
	d.SetSlowdown(2)
	// Kill an in-process engine: requests still succeed on the others.
	if err := s.Kill("llm-0"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		resp, body := post(t, s.URL()+"/v1/chat/completions", `{"messages":[{"role":"user","content":"after kill"}],"max_tokens":2}`)
		if resp.StatusCode != 200 || resp.Header.Get("X-Engine-Id") == "llm-0" {
			t.Fatalf("after killing llm-0: %d from %q: %s", resp.StatusCode, resp.Header.Get("X-Engine-Id"), body)
		}
	}
	if err := s.Pause("llm-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Resume("llm-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Drill("ghost"); err == nil {
		t.Error("drill handle for an unknown engine")
	}
	if _, err := s.Process("llm-0"); err == nil {
		t.Error("process id for an in-process engine")
	}
}

// TestCloseEndsInFlightStreams: Close returns within the shutdown timeout
// even with a long stream running, and the stream ends.
func TestCloseEndsInFlightStreams(t *testing.T) {
	cfg := stack.DefaultConfig()
	cfg.Index.Size = 0
	cfg.Limits.ShutdownTimeout = 200 * time.Millisecond
	cfg.Listen = "127.0.0.1:0"
	s, err := stack.Start(t.Context(), cfg, stack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"long"}],"max_tokens":16000,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("Close took %v", el)
	}
	done := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, resp.Body); done <- err }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("stream still open after Close")
	}
}
