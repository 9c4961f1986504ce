package dataflow_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
)

func TestLocalDeliversEveryRecordOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		par       int
		queue     int
		serialize bool
	}{
		{"p1-q1", 1, 1, false},
		{"p4-q8", 4, 8, false},
		{"p2-serialized", 2, 16, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops := map[string]dataflow.OperatorFunc{"a": appendOp("a"), "b": appendOp("b"), "c": appendOp("c")}
			eng, wait := newEngine(t, ops, chain(tc.par, tc.queue, "a", "b", "c"), dataflow.LocalOptions{Serialize: tc.serialize})
			const n = 500
			got := runAll(t, eng, wait, n)
			if len(got) != n {
				t.Fatalf("got %d results, want %d", len(got), n)
			}
			for id, r := range got {
				if string(r.Payload) != "x|a|b|c" || r.Err != nil {
					t.Fatalf("%s: payload %q err %v, want x|a|b|c and no error", id, r.Payload, r.Err)
				}
				if r.Meta.Trace != "t-"+id || r.Meta.Tenant != "ten" {
					t.Fatalf("%s: metadata %+v not carried", id, r.Meta)
				}
				checkHops(t, r, "s0", "s1", "s2")
			}
			if s := eng.Stats(); s.Submitted != n || s.Delivered != n || s.InFlight != 0 || s.Duplicates != 0 {
				t.Fatalf("stats %+v", s)
			}
		})
	}
}

// checkHops asserts r visited stages in order with ordered, complete times.
func checkHops(t *testing.T, r dataflow.Record, stages ...string) {
	t.Helper()
	if len(r.Hops) != len(stages) {
		t.Fatalf("%s: %d hops, want %d: %+v", r.ID, len(r.Hops), len(stages), r.Hops)
	}
	for i, h := range r.Hops {
		if h.Stage != stages[i] {
			t.Fatalf("%s: hop %d at stage %q, want %q", r.ID, i, h.Stage, stages[i])
		}
		if h.Enqueued.IsZero() || h.Started.Before(h.Enqueued) || h.Ended.Before(h.Started) {
			t.Fatalf("%s: hop %d times out of order: %+v", r.ID, i, h)
		}
		if i > 0 && h.Enqueued.Before(r.Hops[i-1].Ended) {
			t.Fatalf("%s: hop %d enqueued before hop %d ended", r.ID, i, i-1)
		}
	}
}

// TestParallelismBoundsConcurrency checks that a stage with parallelism P
// has at most P records in service, and that P blocking calls really
// overlap: each call waits until P calls are in service at once.
func TestParallelismBoundsConcurrency(t *testing.T) {
	for _, p := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("P=%d", p), func(t *testing.T) {
			var inService, peak atomic.Int64
			var mu sync.Mutex
			full := make(chan struct{}) // closed once P calls were in service together
			var once sync.Once
			op := func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
				n := inService.Add(1)
				defer inService.Add(-1)
				mu.Lock()
				if n > peak.Load() {
					peak.Store(n)
				}
				mu.Unlock()
				if n == int64(p) {
					once.Do(func() { close(full) })
				}
				select {
				case <-full:
				case <-ctx.Done():
					return ctx.Err()
				}
				return emit(in)
			}
			g := chain(1, 4, "src", "blocking")
			g.Stages[1].Parallelism = p
			eng, wait := newEngine(t, map[string]dataflow.OperatorFunc{"src": appendOp("s"), "blocking": op}, g, dataflow.LocalOptions{})
			got := runAll(t, eng, wait, 8*p)
			if len(got) != 8*p {
				t.Fatalf("got %d results, want %d", len(got), 8*p)
			}
			if pk := peak.Load(); pk != int64(p) {
				t.Fatalf("peak records in service = %d, want exactly P = %d", pk, p)
			}
		})
	}
}

func TestStageFailureBecomesErrorRecord(t *testing.T) {
	// stall is the stage timeout: long enough that a healthy call on a
	// loaded machine never reaches it.
	const stall = 500 * time.Millisecond
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	bad := func(f func(context.Context) error) dataflow.OperatorFunc {
		return func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
			if strings.HasSuffix(in.ID, "3") {
				if err := f(ctx); err != nil {
					return err
				}
			}
			return emit(in)
		}
	}
	for _, tc := range []struct {
		name    string
		op      dataflow.OperatorFunc
		timeout time.Duration
		kind    dataflow.ErrorKind
		msg     string
	}{
		{"error", bad(func(context.Context) error { return errors.New("boom") }), 0, dataflow.KindError, "boom"},
		{"panic", bad(func(context.Context) error { panic("kaboom") }), 0, dataflow.KindPanic, "kaboom"},
		{"timeout-respects-ctx", bad(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }), stall, dataflow.KindTimeout, "timeout"},
		{"timeout-ignores-ctx", bad(func(context.Context) error { <-release; return nil }), stall, dataflow.KindTimeout, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := chain(2, 4, "a", "faulty", "c")
			g.Stages[1].Timeout = tc.timeout
			ops := map[string]dataflow.OperatorFunc{"a": appendOp("a"), "faulty": tc.op, "c": appendOp("c")}
			eng, wait := newEngine(t, ops, g, dataflow.LocalOptions{Serialize: true})
			const n = 20
			got := runAll(t, eng, wait, n)
			if len(got) != n {
				t.Fatalf("got %d results, want %d (the pipeline must go on)", len(got), n)
			}
			failed := 0
			for id, r := range got {
				if !strings.HasSuffix(id, "3") {
					if r.Err != nil || string(r.Payload) != "x|a|c" {
						t.Fatalf("%s: err %v payload %q, want success", id, r.Err, r.Payload)
					}
					continue
				}
				failed++
				if r.Err == nil || r.Err.Kind != tc.kind || r.Err.Stage != "s1" || r.Err.Operator != "faulty" {
					t.Fatalf("%s: error record %+v, want kind %s at stage s1 (faulty)", id, r.Err, tc.kind)
				}
				if !strings.Contains(r.Err.Error(), tc.msg) {
					t.Fatalf("%s: message %q lacks %q", id, r.Err.Error(), tc.msg)
				}
				checkHops(t, r, "s0", "s1")
			}
			if s := eng.Stats(); s.Errors != int64(failed) || failed != 2 {
				t.Fatalf("errors: stats %d, seen %d, want 2", s.Errors, failed)
			}
			if s := eng.Stats(); tc.name == "timeout-ignores-ctx" && s.TimedOut != 2 {
				t.Fatalf("Stats().TimedOut = %d, want 2 abandoned calls", s.TimedOut)
			}
		})
	}
}

// TestBackpressureBoundsMemory blocks the last stage and lets a source
// offer 1e6 records of 1 KiB: the engine must accept no more than its
// queues and workers hold, and the heap must not grow with the input.
func TestBackpressureBoundsMemory(t *testing.T) {
	const par, queue, stages = 2, 16, 3
	const bound = stages*queue + stages*par
	block := make(chan struct{})
	sink := func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
		return emit(in)
	}
	reg := dataflow.NewRegistry()
	_ = reg.RegisterFunc("noop", noop)
	_ = reg.RegisterFunc("sink", sink)
	eng, err := dataflow.NewLocal(reg, dataflow.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := eng.Deploy(ctx, chain(par, queue, "noop", "noop", "sink")); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	before := heapInUse()
	submitted := make(chan error, 1)
	go func() {
		payload := make([]byte, 1024)
		for i := range 1_000_000 {
			if err := eng.Submit(ctx, dataflow.Record{ID: fmt.Sprint(i), Payload: payload}); err != nil {
				submitted <- err
				return
			}
		}
		submitted <- nil
	}()
	deadline := time.Now().Add(testTimeout)
	for eng.Stats().Submitted < bound && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for range 50 { // keep watching: the count must stay at the bound
		if s := eng.Stats().Submitted; s != bound {
			t.Fatalf("accepted %d records with the sink blocked, want exactly Σqueues+Σworkers = %d", s, bound)
		}
		time.Sleep(time.Millisecond)
	}
	if grew := heapInUse() - before; grew > 16<<20 {
		t.Errorf("heap grew by %d MiB with the sink blocked", grew>>20)
	}
	cancel()
	if err := <-served; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve after cancel: %v, want context.Canceled", err)
	}
	if err := <-submitted; err == nil {
		t.Fatal("Submit kept succeeding after the run was cancelled")
	}
	for range eng.Results() {
	}
	close(block)
}

func TestUnknownOperatorFailsDeploy(t *testing.T) {
	reg := dataflow.NewRegistry()
	_ = reg.RegisterFunc("embed", noop)
	_ = reg.RegisterFunc("retrieve", noop)
	eng, _ := dataflow.NewLocal(reg, dataflow.LocalOptions{})
	err := eng.Deploy(context.Background(), chain(1, 1, "embed", "retreive"))
	var uo *dataflow.UnknownOperatorError
	if !errors.As(err, &uo) {
		t.Fatalf("Deploy: %v, want *UnknownOperatorError", err)
	}
	if uo.Stage != "s1" || uo.Operator != "retreive" || strings.Join(uo.Registered, ",") != "embed,retrieve" {
		t.Fatalf("error fields %+v", uo)
	}
	for _, want := range []string{`"s1"`, `"retreive"`, "embed, retrieve"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %s", err, want)
		}
	}
	if err := eng.Submit(context.Background(), dataflow.Record{ID: "a"}); !errors.Is(err, dataflow.ErrNotDeployed) {
		t.Errorf("Submit on an undeployed engine: %v, want ErrNotDeployed", err)
	}
}

// TestRedeliveryDedupAtSink turns fault injection on: operators see
// duplicate deliveries, yet every record reaches the sink exactly once.
func TestRedeliveryDedupAtSink(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	redelivered := 0
	counting := func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		mu.Lock()
		calls[in.ID]++
		if in.Delivery > 1 {
			redelivered++
		}
		mu.Unlock()
		return emit(in)
	}
	ops := map[string]dataflow.OperatorFunc{"count": counting, "a": appendOp("a")}
	eng, wait := newEngine(t, ops, chain(2, 8, "a", "count", "a"), dataflow.LocalOptions{Redeliver: 0.3, Seed: 7, Serialize: true})
	const n = 1000
	got := runAll(t, eng, wait, n)
	if len(got) != n {
		t.Fatalf("got %d distinct results, want %d", len(got), n)
	}
	total := 0
	for _, c := range calls {
		total += c
	}
	s := eng.Stats()
	if total <= n || redelivered == 0 {
		t.Fatalf("operator saw %d calls (%d redeliveries) for %d records: fault injection did not redeliver", total, redelivered, n)
	}
	if s.Duplicates == 0 || s.Redelivered == 0 || s.Delivered != n || s.InFlight != 0 {
		t.Fatalf("stats %+v: want duplicates dropped, %d delivered", s, n)
	}
}

func TestCancelStopsRun(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Hour} { // untimed and timed calls
		t.Run(fmt.Sprintf("timeout=%v", timeout), func(t *testing.T) { testCancelStopsRun(t, timeout) })
	}
}

func testCancelStopsRun(t *testing.T, timeout time.Duration) {
	hang := func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		<-ctx.Done()
		return ctx.Err()
	}
	reg := dataflow.NewRegistry()
	_ = reg.RegisterFunc("hang", hang)
	eng, _ := dataflow.NewLocal(reg, dataflow.LocalOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	g := chain(2, 2, "hang")
	g.Stages[0].Timeout = timeout
	if err := eng.Deploy(ctx, g); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	for i := range 3 {
		if err := eng.Submit(ctx, dataflow.Record{ID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if err := <-served; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve: %v, want context.Canceled", err)
	}
	for r := range eng.Results() {
		t.Errorf("unexpected result %s after cancel", r.ID)
	}
	if err := eng.Submit(context.Background(), dataflow.Record{ID: "late"}); !errors.Is(err, dataflow.ErrClosed) {
		t.Fatalf("Submit after the run stopped: %v, want ErrClosed", err)
	}
	if n := eng.Stats().TimedOut; n != 0 {
		t.Fatalf("Stats().TimedOut = %d after a cancel, want 0 (no stage timeout elapsed)", n)
	}
}

func TestFanOutAndLateEmit(t *testing.T) {
	var late func(dataflow.Record) error
	var lateMu sync.Mutex
	fan := func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		lateMu.Lock()
		late = emit
		lateMu.Unlock()
		for i := range 3 {
			if err := emit(dataflow.Record{Payload: []byte(fmt.Sprint(i))}); err != nil {
				return err
			}
		}
		return nil
	}
	eng, wait := newEngine(t, map[string]dataflow.OperatorFunc{"fan": fan, "a": appendOp("a")}, chain(1, 4, "fan", "a"), dataflow.LocalOptions{})
	got := runAll(t, eng, wait, 5)
	if len(got) != 15 {
		t.Fatalf("got %d results, want 15", len(got))
	}
	r, ok := got["r0004.2"]
	if !ok || string(r.Payload) != "2|a" || r.Meta.Trace != "t-r0004" {
		t.Fatalf("child r0004.2 = %+v (present %v), want payload 2|a and the parent's metadata", r, ok)
	}
	checkHops(t, r, "s0", "s1")
	lateMu.Lock()
	defer lateMu.Unlock()
	if err := late(dataflow.Record{ID: "zombie"}); !errors.Is(err, dataflow.ErrEmitClosed) {
		t.Fatalf("emit after Process returned: %v, want ErrEmitClosed", err)
	}
}

func TestObserverSeesEveryStage(t *testing.T) {
	var mu sync.Mutex
	events := map[string][]dataflow.Event{} // by ID, indexed by stage
	obs := func(e dataflow.Event) {
		mu.Lock()
		ev := events[e.ID]
		if ev == nil {
			ev = make([]dataflow.Event, 2)
			events[e.ID] = ev
		}
		ev[int(e.Stage[1]-'0')] = e // stages are s0, s1
		mu.Unlock()
	}
	eng, wait := newEngine(t, map[string]dataflow.OperatorFunc{"a": appendOp("a")}, chain(2, 4, "a", "a"), dataflow.LocalOptions{Observer: obs})
	got := runAll(t, eng, wait, 50)
	mu.Lock()
	defer mu.Unlock()
	for id, r := range got {
		ev := events[id]
		if len(ev) != 2 {
			t.Fatalf("%s: %d events, want 2", id, len(ev))
		}
		for i, e := range ev {
			if e.Stage != fmt.Sprintf("s%d", i) || e.Outputs != 1 || e.Err != nil || e.Trace != "t-"+id {
				t.Fatalf("%s: event %d = %+v", id, i, e)
			}
			if !e.Hop.Enqueued.Equal(r.Hops[i].Enqueued) || !e.Hop.Started.Equal(r.Hops[i].Started) || e.Hop.Ended.Before(r.Hops[i].Ended) {
				t.Fatalf("%s: event hop %+v disagrees with record hop %+v", id, e.Hop, r.Hops[i])
			}
		}
	}
}

// TestSerializeIsolatesStages: an operator that reuses its output buffer
// after emitting must not corrupt what the next stage sees when records are
// serialised at stage boundaries.
func TestSerializeIsolatesStages(t *testing.T) {
	scribble := func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		out := in
		out.Payload = []byte("good")
		if err := emit(out); err != nil {
			return err
		}
		copy(out.Payload, "BAD!")
		return nil
	}
	eng, wait := newEngine(t, map[string]dataflow.OperatorFunc{"scribble": scribble, "a": appendOp("a")}, chain(2, 4, "scribble", "a"), dataflow.LocalOptions{Serialize: true})
	for id, r := range runAll(t, eng, wait, 100) {
		if string(r.Payload) != "good|a" {
			t.Fatalf("%s: payload %q, want good|a", id, r.Payload)
		}
	}
}

func TestSubmitRejects(t *testing.T) {
	eng, wait := newEngine(t, map[string]dataflow.OperatorFunc{"a": appendOp("a")}, chain(1, 1, "a"), dataflow.LocalOptions{})
	if err := eng.Submit(context.Background(), dataflow.Record{}); !errors.Is(err, dataflow.ErrEmptyID) {
		t.Errorf("empty ID: %v, want ErrEmptyID", err)
	}
	if err := eng.Deploy(context.Background(), chain(1, 1, "a")); !errors.Is(err, dataflow.ErrDeployed) {
		t.Errorf("second Deploy: %v, want ErrDeployed", err)
	}
	eng.CloseInput()
	if err := eng.Submit(context.Background(), dataflow.Record{ID: "a"}); !errors.Is(err, dataflow.ErrClosed) {
		t.Errorf("after CloseInput: %v, want ErrClosed", err)
	}
	if err := wait(); err != nil {
		t.Errorf("Serve with no input: %v", err)
	}
}

func TestLocalOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts dataflow.LocalOptions
		ok   bool
	}{
		{"zero", dataflow.LocalOptions{}, true},
		{"redeliver-1", dataflow.LocalOptions{Redeliver: 1}, true},
		{"redeliver-negative", dataflow.LocalOptions{Redeliver: -0.1}, false},
		{"redeliver-over-1", dataflow.LocalOptions{Redeliver: 1.5}, false},
		{"results-negative", dataflow.LocalOptions{ResultsCapacity: -1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.opts.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestHopsSeparateQueueingFromService: with one worker and a 2 ms
// operator, three records enqueued before the workers start are served one
// after the other, so each record's service time is at least 2 ms and the
// last one queued at least two services' worth. (Lower bounds only: they
// hold on any machine however slow.)
func TestHopsSeparateQueueingFromService(t *testing.T) {
	const d = 2 * time.Millisecond
	slow := func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		time.Sleep(d)
		return emit(in)
	}
	reg := dataflow.NewRegistry()
	_ = reg.RegisterFunc("slow", slow)
	eng, _ := dataflow.NewLocal(reg, dataflow.LocalOptions{})
	ctx := context.Background()
	if err := eng.Deploy(ctx, chain(1, 8, "slow")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := eng.Submit(ctx, dataflow.Record{ID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	eng.CloseInput()
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	var queued []time.Duration
	for r := range eng.Results() {
		h := r.Hops[0]
		if h.Service() < d {
			t.Fatalf("%s: service %s, want ≥ %s", r.ID, h.Service(), d)
		}
		queued = append(queued, h.Queue())
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if len(queued) != 3 {
		t.Fatalf("%d results, want 3", len(queued))
	}
	if longest := slices.Max(queued); longest < 2*d {
		t.Fatalf("longest queueing %s, want ≥ %s (two services ahead of it)", longest, 2*d)
	}
}

// TestTimedOutEmitBlockedOnResultsIsDelivered: a last-stage call that
// emitted but is still blocked on a full Results when its stage timeout
// fires is abandoned, and its error record is a duplicate of the output
// in flight. Serve must still wait for that output: draining early would
// close the run with the record delivered neither as output nor as error.
func TestTimedOutEmitBlockedOnResultsIsDelivered(t *testing.T) {
	for _, serialize := range []bool{false, true} {
		t.Run(fmt.Sprintf("serialize=%v", serialize), func(t *testing.T) {
			g := chain(1, 4, "emit")
			g.Stages[0].Timeout = 20 * time.Millisecond
			ops := map[string]dataflow.OperatorFunc{"emit": func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
				return emit(in)
			}}
			eng, wait := newEngine(t, ops, g, dataflow.LocalOptions{Serialize: serialize, ResultsCapacity: 1})
			for _, id := range []string{"r0", "r1"} { // r0 fills Results, r1 blocks behind it
				if err := eng.Submit(context.Background(), dataflow.Record{ID: id}); err != nil {
					t.Fatal(err)
				}
			}
			eng.CloseInput()
			deadline := time.Now().Add(testTimeout)
			for eng.Stats().TimedOut == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			served := make(chan error, 1)
			go func() { served <- wait() }()
			select { // give an early drain the chance to happen before reading
			case <-served:
			case <-time.After(100 * time.Millisecond):
			}
			got := map[string]bool{}
			for r := range eng.Results() {
				got[r.ID] = true
			}
			if !got["r0"] || !got["r1"] {
				t.Fatalf("results %v: want r0 and r1 (one record per accepted ID)", got)
			}
		})
	}
}
