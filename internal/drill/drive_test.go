package drill_test

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/drill/drilltest"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/workload"
)

// inProcessStack is a small embedded stack without child processes.
const inProcessStack = `policy: fifo
engines:
  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100}
  - {id: llm-1, kind: llm, profile: llama3.1-8b-h100}
  - {id: embed-0, kind: embedding, profile: bge-small-cpu}
index: {size: 0}
health: {interval: 100ms}
`

func openEmbedded(t *testing.T) *target.Target {
	t.Helper()
	tg, err := target.Open(t.Context(), target.Config{URL: target.Embedded},
		target.Options{Start: target.EmbeddedStack(nil), Seed: 1, StackYAML: []byte(inProcessStack)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(context.Background()) })
	return tg
}

func newEnv(tg *target.Target) (*workload.Env, *[]record.Request) {
	var mu sync.Mutex
	var got []record.Request
	env := &workload.Env{Target: tg, Seed: 7, Start: time.Now(), Drain: 5 * time.Second, Log: io.Discard,
		Sent: func() {},
		Record: func(r record.Request) {
			mu.Lock()
			got = append(got, r)
			mu.Unlock()
		}}
	return env, &got
}

func tinyLoad() drill.Load {
	l := drill.DefaultLoad(20, 3*time.Second)
	l.LLM.MaxTokens, l.LLM.PromptWords = 8, 16
	return l
}

func tinyConfig(events ...drill.Event) drill.Config {
	return drill.Config{Events: events, Recovery: drill.Recovery{Metric: "e2e_p99", Bound: 5 * time.Second, Hold: 250 * time.Millisecond}}
}

// TestLostDetectorFires: the stack silently drops three responses; the
// drill counts exactly those three as lost (truncated: each answer
// started and never ended), and events.jsonl
// records the drop.
func TestLostDetectorFires(t *testing.T) {
	tg := openEmbedded(t)
	env, got := newEnv(tg)
	r, err := drill.Drive(t.Context(), env, "t", tinyLoad(), tinyConfig(drill.Event{At: time.Second, Action: drill.Drop, Count: 3}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Lost.Lost != 3 || r.Lost.ByClass["truncated"] != 3 {
		t.Fatalf("lost %+v; want 3 truncated", r.Lost)
	}
	if r.Lost.Sent != len(*got) || r.Lost.OK+r.Lost.Explicit+r.Lost.Lost != r.Lost.Sent {
		t.Errorf("accounting %+v does not add up to %d records", r.Lost, len(*got))
	}
	if len(r.Events) != 1 || r.Events[0].Outcome != drill.OutcomeOK || r.Events[0].Via != "stack" || r.Events[0].ActualNS < r.Events[0].IntendedNS {
		t.Errorf("events %+v", r.Events)
	}
	o, err := r.Outcome(result.New("drill", drill.DefLost.Measure(3, 1, "")))
	if err != nil {
		t.Fatal(err)
	}
	lost, _ := o.Result.Metric("lost_truncated")
	if lost.Value != 3 || len(o.Files) != 2 || len(o.Invalid) != 0 || len(o.Result.Events) != 1 {
		t.Errorf("outcome lost_truncated %+v files %d invalid %v events %v", lost, len(o.Files), o.Invalid, o.Result.Events)
	}
}

// TestNoLossWithoutFaults: the same load without a fault loses nothing.
func TestNoLossWithoutFaults(t *testing.T) {
	env, _ := newEnv(openEmbedded(t))
	r, err := drill.Drive(t.Context(), env, "t", tinyLoad(), tinyConfig())
	if err != nil {
		t.Fatal(err)
	}
	if r.Lost.Lost != 0 || r.Lost.Sent == 0 || r.Lost.OK != r.Lost.Sent {
		t.Fatalf("lost %+v", r.Lost)
	}
}

// TestURLTargetWithoutHooks: a fault the URL target cannot take is not
// performed; the run says so and is not comparable.
func TestURLTargetWithoutHooks(t *testing.T) {
	emb := openEmbedded(t)
	tg, err := target.Open(t.Context(), target.Config{URL: emb.URL()}, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(context.Background())
	env, _ := newEnv(tg)
	r, err := drill.Drive(t.Context(), env, "t", tinyLoad(), tinyConfig(
		drill.Event{At: 500 * time.Millisecond, Action: drill.Kill, Engine: "llm-1"},
		drill.Event{At: time.Second, Action: drill.Drain, Engine: "llm-1"}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Events[0].Outcome != drill.OutcomeNotPerformed || r.Events[1].Outcome != drill.OutcomeOK || r.Events[1].Via != "admin" {
		t.Fatalf("events %+v", r.Events)
	}
	o, _ := r.Outcome(result.Result{})
	if len(o.Invalid) != 1 || len(r.NotPerformed()) != 1 {
		t.Errorf("invalid %v; want one reason naming the kill", o.Invalid)
	}
}

// TestExecHookKillsEngineProcess: an external target (a gateway in front
// of a `sagebench serve engine` process this test started, plus a second
// engine) loses its engine process through an exec: hook that SIGKILLs
// it; the hook's exit status is recorded and nothing is lost.
func TestExecHookKillsEngineProcess(t *testing.T) {
	cmd := drilltest.StartEngineProcess(t, "ext-0")
	tg := openGateway(t, cmd.URL)
	env, _ := newEnv(tg)
	cfg := tinyConfig(drill.Event{At: time.Second, Action: drill.Kill, Engine: "ext-0"})
	cfg.Hooks = map[string]drill.Hook{drill.Kill: {Exec: []string{"kill", "-KILL", strconv.Itoa(cmd.Process.Pid)}}}
	r, err := drill.Drive(t.Context(), env, "t", tinyLoad(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := r.Events[0]
	if e.Outcome != drill.OutcomeOK || e.Via != "exec" || e.ExitStatus == nil || *e.ExitStatus != 0 {
		t.Fatalf("event %+v", e)
	}
	select {
	case <-cmd.Exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the engine process is still running after the hook")
	}
	if st := cmd.ProcessState.String(); !strings.Contains(st, "killed") {
		t.Errorf("engine process state %q; want killed", st)
	}
	if r.Lost.Lost != 0 {
		t.Errorf("lost %+v", r.Lost)
	}
}

// TestFailedEventNotComparable: an event that fails (an unknown engine)
// is recorded as an error and makes the run not comparable.
func TestFailedEventNotComparable(t *testing.T) {
	env, _ := newEnv(openEmbedded(t))
	r, err := drill.Drive(t.Context(), env, "t", tinyLoad(), tinyConfig(drill.Event{At: 500 * time.Millisecond, Action: drill.Kill, Engine: "nope"}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Events[0].Outcome != drill.OutcomeError || !strings.Contains(r.Events[0].Error, "nope") {
		t.Fatalf("event %+v", r.Events[0])
	}
	o, _ := r.Outcome(result.Result{})
	if len(o.Invalid) != 1 || !strings.Contains(o.Invalid[0], "kill nope") {
		t.Errorf("invalid %v", o.Invalid)
	}
}
