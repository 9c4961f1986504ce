package drill_test

import (
	"context"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/drill/drilltest"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/series"
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

func openEmbedded(t *testing.T) *target.Target { return openStack(t, inProcessStack) }

// openStack opens the embedded stack of stackYAML for the test.
func openStack(t *testing.T, stackYAML string) *target.Target {
	t.Helper()
	tg, err := target.Open(t.Context(), target.Config{URL: target.Embedded},
		target.Options{Start: target.EmbeddedStack(nil), Seed: 1, StackYAML: []byte(stackYAML)})
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
	// windows of 100 ms: five of them (one of warm-up, four of steady
	// state) fit before an event at 0.5 s
	return drill.Config{Events: events, Series: series.Config{Width: 100 * time.Millisecond, Step: 50 * time.Millisecond},
		Recovery: drill.Recovery{Metric: "e2e_p99", Bound: 5 * time.Second, Hold: 250 * time.Millisecond}}
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
	if lost.Value != 3 || len(o.Files) != len(drill.FileNames) || len(o.Invalid) != 0 || len(o.Result.Events) != 1 {
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

// TestHookTimeoutDoesNotHoldTheRun: an exec hook that leaves `sleep 40 &`
// holding its output is stopped at its timeout (1 s) and recorded
// timed_out within a second of it; the next event still happens on time,
// and the run says it is not comparable.
func TestHookTimeoutDoesNotHoldTheRun(t *testing.T) {
	env, _ := newEnv(openEmbedded(t))
	cfg := tinyConfig(drill.Event{At: 500 * time.Millisecond, Action: drill.Kill, Engine: "llm-0"},
		drill.Event{At: 2 * time.Second, Action: drill.Policy, Policy: "priority"})
	cfg.Hooks = map[string]drill.Hook{drill.Kill: {Exec: []string{"sh", "-c", "sleep 40 &"}, Timeout: time.Second}}
	r, err := drill.Drive(t.Context(), env, "t", tinyLoad(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hook, next := r.Events[0], r.Events[1]
	if took := time.Duration(hook.DoneNS - hook.ActualNS); hook.Outcome != drill.OutcomeTimedOut || took > 2*time.Second {
		t.Fatalf("hook event %+v took %v; want timed_out within 2 s", hook, took)
	}
	if !strings.Contains(hook.Error, "timed out after 1s") {
		t.Errorf("error %q", hook.Error)
	}
	if next.Outcome != drill.OutcomeOK || next.ActualNS-next.IntendedNS > int64(time.Second) {
		t.Errorf("the next event %+v: want ok and on time", next)
	}
	o, _ := r.Outcome(result.Result{})
	if len(o.Invalid) != 1 || !strings.Contains(o.Invalid[0], "timed_out") || o.Result.Events[0].Outcome != drill.OutcomeTimedOut {
		t.Errorf("invalid %v, events %+v", o.Invalid, o.Result.Events)
	}
}

// cappedStack is an in-process stack whose one LLM engine runs at most
// two requests: its capacity is small enough to measure and to exceed.
const cappedStack = `policy: fifo
engines:
  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100, slots: 2}
  - {id: embed-0, kind: embedding, profile: bge-small-cpu}
index: {size: 0}
health: {interval: 100ms}
`

func openCapped(t *testing.T) *target.Target { return openStack(t, cappedStack) }

// TestLoadSizedFromCapacity: with a utilisation the drill first probes
// the target's capacity in a closed loop (recorded as phase capacity),
// then offers that share of it; the capacity, the offered rate and the
// per-engine utilisation are reported.
func TestLoadSizedFromCapacity(t *testing.T) {
	env, got := newEnv(openCapped(t))
	l := tinyLoad()
	l.Schedule.Rate, l.Utilisation = 0, 0.5
	l.Probe = drill.Probe{Step: 400 * time.Millisecond, Start: 2, Max: 32}
	r, err := drill.Drive(t.Context(), env, "t", l, tinyConfig(drill.Event{At: time.Second, Action: drill.Slowdown, Engine: "llm-0", Factor: 2}))
	if err != nil {
		t.Fatal(err)
	}
	c := r.Sizing.Capacity
	if c == nil || !(c.Rate > 0) || len(c.Levels) < 2 || r.ProbePhase == nil || !r.ProbePhase.ClosedLoop {
		t.Fatalf("capacity %+v probe phase %+v", c, r.ProbePhase)
	}
	if r.Sizing.Rate != 0.5*c.Rate || r.Phase.Scheduled < 1 {
		t.Errorf("offered %v req/s for a capacity of %v", r.Sizing.Rate, c.Rate)
	}
	if e, ok := c.Engines["llm-0"]; !ok || e.Share != 1 {
		t.Errorf("engine shares %+v: llm-0 serves every chat completion", c.Engines)
	}
	probes := 0
	for _, q := range *got {
		if q.Phase == "capacity" {
			probes++
		}
	}
	if probes != c.Sent || probes == 0 {
		t.Errorf("%d probe requests recorded, %d sent", probes, c.Sent)
	}
	o, err := r.Outcome(result.Result{})
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := o.Result.Metric("utilisation"); !(u.Measured() && u.Value == 0.5) && u.State != result.Bound {
		t.Errorf("utilisation %+v", u)
	}
	after, _ := metricOf(o.Result.Events[0].Metrics, "utilisation_after")
	if !after.Measured() || math.Abs(after.Value-1) > 1e-9 { // 0.5 ÷ (1 − 1 × (1 − 1/2))
		t.Errorf("utilisation after a ×2 slowdown of the only LLM engine: %+v; want 1", after)
	}
	if len(o.Phases) != 2 || o.Phases[0].Name != "capacity" || len(o.Result.Tables) != 1 {
		t.Errorf("phases %+v tables %d", o.Phases, len(o.Result.Tables))
	}
}

func metricOf(ms []result.Metric, name string) (result.Metric, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return result.Metric{}, false
}

// TestSlowdownRecoversOnlyAfterItEnds: a ×20 slowdown of the only LLM
// engine for 4 s breaks the TTFT bound at once; however the windows look
// while it is on, its recovery is counted from its end, never before.
func TestSlowdownRecoversOnlyAfterItEnds(t *testing.T) {
	env, _ := newEnv(openCapped(t))
	l := drill.DefaultLoad(15, 9*time.Second)
	l.LLM.MaxTokens, l.LLM.PromptWords = 8, 16
	cfg := drill.Config{Events: []drill.Event{{At: time.Second, Action: drill.Slowdown, Engine: "llm-0", Factor: 20, Duration: 4 * time.Second}},
		Series:   series.Config{Width: 500 * time.Millisecond, Step: 250 * time.Millisecond},
		Recovery: drill.Recovery{Metric: "ttft_p99", Bound: 300 * time.Millisecond, Hold: 500 * time.Millisecond}}
	r, err := drill.Drive(t.Context(), env, "t", l, cfg)
	if err != nil {
		t.Fatal(err)
	}
	slow, end := r.Events[0], r.Events[1]
	if slow.EndNS != end.ActualNS || end.UndoOf == nil || *end.UndoOf != 0 || len(r.Recovery) != 1 {
		t.Fatalf("events %+v recovery %+v", r.Events, r.Recovery)
	}
	x := r.Recovery[0]
	if !x.Violated || x.FaultEndNS != slow.EndNS {
		t.Fatalf("recovery %+v: want violated, measured from the slowdown's end", x.Recovery)
	}
	if x.Measured() && x.RecoveredNS < slow.EndNS {
		t.Errorf("recovered at %.2f s, before the slowdown ended at %.2f s", float64(x.RecoveredNS)/1e9, float64(slow.EndNS)/1e9)
	}
	m := x.Metrics()[0]
	if m.Measured() && (m.Resolution == nil || *m.Resolution != 250 || !strings.Contains(m.Reason, "from the fault's end")) {
		t.Errorf("recovery metric %+v", m)
	}
	t.Logf("slowdown %.2f–%.2f s: violated after %.0f ms, %s", float64(slow.ActualNS)/1e9, float64(slow.EndNS)/1e9, x.ToViolationMs(), result.Format(m))
}

// TestCutLosesStreams: cutting every connection to the gateway with
// streams in flight loses them — the answers were cut (truncated) or
// never came (reset) — and the lost counter says so by class.
func TestCutLosesStreams(t *testing.T) {
	env, _ := newEnv(openEmbedded(t))
	l := drill.DefaultLoad(40, 3*time.Second)
	l.LLM.MaxTokens = 200 // long streams: some are always in flight
	r, err := drill.Drive(t.Context(), env, "t", l, tinyConfig(drill.Event{At: 1500 * time.Millisecond, Action: drill.Cut}))
	if err != nil {
		t.Fatal(err)
	}
	if e := r.Events[0]; e.Outcome != drill.OutcomeOK || !strings.Contains(e.Output, "connections dropped") || e.Target != "connections" {
		t.Fatalf("cut event %+v", e)
	}
	if r.Lost.Lost == 0 || r.Lost.ByClass["truncated"]+r.Lost.ByClass["reset"]+r.Lost.ByClass["dropped_after_send"] != r.Lost.Lost {
		t.Fatalf("lost %+v; want streams cut by the cut", r.Lost)
	}
	o, _ := r.Outcome(result.Result{})
	for _, class := range drill.LostClasses {
		if m, ok := o.Result.Metric("lost_" + class); !ok || !m.Measured() {
			t.Errorf("lost_%s %+v: every class is reported, 0 when none", class, m)
		}
	}
}
