package stack_test

import (
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack"
)

// TestRestartProcessEngine: a SIGKILLed process engine restarted on its
// address is re-admitted by the gateway and serves again.
func TestRestartProcessEngine(t *testing.T) {
	t.Setenv(childEnv, "1")
	cfg := stack.Config{Policy: "fifo",
		Engines: []stack.EngineConfig{{ID: "p0", Kind: "llm", Profile: "llama3.1-8b-h100", Process: true}},
		Health:  stack.HealthConfig{Interval: 50 * time.Millisecond, EjectAfter: 1}}
	s := startStack(t, cfg, stack.Options{EngineBinary: os.Args[0]})
	pid, _ := s.Process("p0")
	if err := s.Kill("p0"); err != nil {
		t.Fatal(err)
	}
	waitState(t, s, "p0", "ejected")
	if err := s.Restart(t.Context(), "p0"); err != nil {
		t.Fatal(err)
	}
	if pid2, _ := s.Process("p0"); pid2 == pid {
		t.Fatalf("restart kept pid %d", pid)
	}
	waitState(t, s, "p0", "active")
	client := newClient()
	if o := streamOutcome(client, s.URL()); !o.ok {
		t.Fatalf("after restart: %+v", o)
	}
}

// TestSlowdownProcessEngine: a duty-cycle slowdown leaves the child
// stopped part of the time and running once the factor is back to 1.
func TestSlowdownProcessEngine(t *testing.T) {
	t.Setenv(childEnv, "1")
	cfg := stack.Config{Policy: "fifo",
		Engines: []stack.EngineConfig{{ID: "p0", Kind: "llm", Profile: "llama3.1-8b-h100", Process: true}}}
	s := startStack(t, cfg, stack.Options{EngineBinary: os.Args[0]})
	pid, _ := s.Process("p0")
	if err := s.Slowdown("p0", 10); err != nil {
		t.Fatal(err)
	}
	stopped := false
	for range 100 { // sample the state: 90 % of each period is stopped
		if procState(pid) == "T" {
			stopped = true
			break
		}
		time.Sleep(7 * time.Millisecond)
	}
	if !stopped {
		t.Error("never saw the child stopped under slowdown ×10")
	}
	if err := s.Slowdown("p0", 1); err != nil {
		t.Fatal(err)
	}
	if st := procState(pid); st == "T" {
		t.Errorf("child state %s after slowdown 1; want running", st)
	}
	if o := streamOutcome(newClient(), s.URL()); !o.ok {
		t.Fatalf("after slowdown: %+v", o)
	}
	if err := s.Slowdown("p0", 0); err == nil {
		t.Error("slowdown 0 accepted")
	}
}

// TestDropResponses: a dropped request gets no answer at all (the
// connection closes), then the stack serves normally.
func TestDropResponses(t *testing.T) {
	cfg := stack.Config{Policy: "fifo",
		Engines: []stack.EngineConfig{{ID: "e0", Kind: "llm", Profile: "llama3.1-8b-h100"}}}
	s := startStack(t, cfg, stack.Options{})
	s.DropResponses(1)
	client := newClient()
	if o := streamOutcome(client, s.URL()); !o.lost {
		t.Fatalf("dropped request: %+v; want lost", o)
	}
	if o := streamOutcome(client, s.URL()); !o.ok {
		t.Fatalf("next request: %+v", o)
	}
}

func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// pid (comm) S …: the state follows the last ')'.
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' && i+2 < len(b) {
			return string(b[i+2])
		}
	}
	return ""
}

func waitState(t *testing.T, s *stack.Stack, id, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		for _, e := range s.Gateway().Engines() {
			if e.ID == id && e.State == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine %s never %s: %+v", id, want, s.Gateway().Engines())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newClient() *http.Client { return &http.Client{Timeout: 30 * time.Second} }
