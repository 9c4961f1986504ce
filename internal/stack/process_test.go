package stack_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack"
)

// outcome classifies one request of a drill.
type outcome struct {
	ok, retried, explicit, lost bool
	detail                      string
}

func streamOutcome(client *http.Client, url string) outcome {
	body := `{"messages":[{"role":"user","content":"drill"}],"max_tokens":60,"stream":true}`
	resp, err := client.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return outcome{lost: true, detail: err.Error()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return outcome{lost: true, detail: "reading: " + err.Error()}
	case resp.StatusCode != 200:
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		if json.Unmarshal(b, &e) != nil || e.Error.Message == "" {
			return outcome{lost: true, detail: fmt.Sprintf("status %d without an error body: %q", resp.StatusCode, b)}
		}
		return outcome{explicit: true, detail: e.Error.Message}
	case strings.Contains(string(b), "event: error"):
		return outcome{explicit: true, detail: "SSE error event"}
	case strings.HasSuffix(string(b), "data: [DONE]\n\n"):
		return outcome{ok: true, retried: resp.Header.Get("X-Sagebench-Retries") == "1"}
	}
	return outcome{lost: true, detail: fmt.Sprintf("stream ended without [DONE] or an error: %q", tail(b))}
}

func tail(b []byte) string {
	if len(b) > 200 {
		b = b[len(b)-200:]
	}
	return string(b)
}

// TestProcessEngineKilledMidLoad runs two engines as child processes
// (`sagebench serve engine`), SIGKILLs one while requests stream through
// the gateway, and checks every request either succeeded (retried where it
// had not started) or ended with an explicit error: none hang, none vanish.
func TestProcessEngineKilledMidLoad(t *testing.T) {
	t.Setenv(childEnv, "1")
	cfg := stack.Config{
		Policy: "fifo",
		Engines: []stack.EngineConfig{
			{ID: "p0", Kind: "llm", Profile: "llama3.1-8b-h100", Process: true},
			{ID: "p1", Kind: "llm", Profile: "llama3.1-8b-h100", Process: true},
		},
		Health: stack.HealthConfig{Interval: 100 * time.Millisecond},
	}
	s := startStack(t, cfg, stack.Options{EngineBinary: os.Args[0]})
	pid, err := s.Process("p0")
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	const n = 120
	results := make([]outcome, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = streamOutcome(client, s.URL())
		}(i)
		time.Sleep(4 * time.Millisecond)
		if i == n/3 {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
	var ok, retried, explicit int
	for i, r := range results {
		switch {
		case r.lost:
			t.Errorf("request %d vanished: %s", i, r.detail)
		case r.explicit:
			explicit++
		case r.ok:
			ok++
			if r.retried {
				retried++
			}
		}
	}
	t.Logf("%d requests in %v: %d ok (%d retried on the other engine), %d explicit errors",
		n, time.Since(start).Round(time.Millisecond), ok, retried, explicit)
	if ok+explicit != n {
		t.Fatalf("accounted %d of %d", ok+explicit, n)
	}
	// After the kill the survivor carries everything.
	for i := 0; i < 10; i++ {
		if r := streamOutcome(client, s.URL()); !r.ok {
			t.Fatalf("after the kill: %+v", r)
		}
	}
	var p0 string
	for _, e := range s.Gateway().Engines() {
		if e.ID == "p0" {
			p0 = e.State
		}
	}
	if p0 != "ejected" {
		t.Errorf("killed engine state %q, want ejected", p0)
	}
}

// TestProcessEngineStoppedMidLoad SIGSTOPs a child engine while requests
// stream: the stall watchdog ends or retries its requests, the health probe
// ejects it, and after SIGCONT it is re-admitted.
func TestProcessEngineStoppedMidLoad(t *testing.T) {
	t.Setenv(childEnv, "1")
	cfg := stack.Config{
		Policy: "fifo",
		Engines: []stack.EngineConfig{
			{ID: "p0", Kind: "llm", Profile: "llama3.1-8b-h100", Process: true},
			{ID: "p1", Kind: "llm", Profile: "llama3.1-8b-h100", Process: true},
		},
		Limits: stack.Limits{StallTimeout: 500 * time.Millisecond},
		Health: stack.HealthConfig{Interval: 100 * time.Millisecond},
	}
	s := startStack(t, cfg, stack.Options{EngineBinary: os.Args[0]})
	client := &http.Client{Timeout: 30 * time.Second}
	const n = 60
	results := make([]outcome, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = streamOutcome(client, s.URL())
		}(i)
		time.Sleep(5 * time.Millisecond)
		if i == n/3 {
			if err := s.Pause("p0"); err != nil {
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
	var ok, explicit int
	for i, r := range results {
		switch {
		case r.lost:
			t.Errorf("request %d vanished: %s", i, r.detail)
		case r.explicit:
			explicit++
		default:
			ok++
		}
	}
	t.Logf("SIGSTOP: %d ok, %d explicit errors", ok, explicit)
	state := func() string {
		for _, e := range s.Gateway().Engines() {
			if e.ID == "p0" {
				return e.State
			}
		}
		return ""
	}
	if st := state(); st != "ejected" {
		t.Errorf("stopped engine state %q, want ejected", st)
	}
	if err := s.Resume("p0"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for state() != "active" {
		if time.Now().After(deadline) {
			t.Fatalf("p0 not re-admitted after SIGCONT (state %s)", state())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
