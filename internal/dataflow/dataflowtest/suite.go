package dataflowtest

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

func testDeliversEveryRecordOnce(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name       string
		par, queue int
	}{{"p1-q1", 1, 1}, {"p4-q8", 4, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			ops := map[string]dataflow.OperatorFunc{"a": AppendOp("a"), "b": AppendOp("b"), "c": AppendOp("c")}
			eng, stats, wait := Start(t, h, ops, Chain(tc.par, tc.queue, "a", "b", "c"), nil)
			const n = 300
			got := RunAll(t, eng, wait, n)
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
				CheckHops(t, r, "s0", "s1", "s2")
			}
			if s := stats(); s.Submitted != n || s.Delivered != n || s.InFlight != 0 || s.Duplicates != 0 {
				t.Fatalf("stats %+v", s)
			}
		})
	}
}

// testParallelismBoundsConcurrency: a stage with parallelism P has at
// most P records in service, and P blocking calls really overlap (each
// waits until P calls are in service at once).
func testParallelismBoundsConcurrency(t *testing.T, h Harness) {
	for _, p := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("P=%d", p), func(t *testing.T) {
			var inService, peak atomic.Int64
			full := make(chan struct{})
			var once sync.Once
			op := func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
				n := inService.Add(1)
				defer inService.Add(-1)
				for pk := peak.Load(); n > pk && !peak.CompareAndSwap(pk, n); pk = peak.Load() {
				}
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
			g := Chain(1, 4*p, "src", "blocking")
			g.Stages[1].Parallelism = p
			eng, _, wait := Start(t, h, map[string]dataflow.OperatorFunc{"src": AppendOp("s"), "blocking": op}, g, nil)
			got := RunAll(t, eng, wait, 8*p)
			if len(got) != 8*p {
				t.Fatalf("got %d results, want %d", len(got), 8*p)
			}
			if pk := peak.Load(); pk != int64(p) {
				t.Fatalf("peak records in service = %d, want exactly P = %d", pk, p)
			}
		})
	}
}

func testStageFailureBecomesErrorRecord(t *testing.T, h Harness) {
	const stall = 500 * time.Millisecond // never reached by a healthy call
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
			g := Chain(2, 4, "a", "faulty", "c")
			g.Stages[1].Timeout = tc.timeout
			ops := map[string]dataflow.OperatorFunc{"a": AppendOp("a"), "faulty": tc.op, "c": AppendOp("c")}
			eng, stats, wait := Start(t, h, ops, g, nil)
			const n = 20
			got := RunAll(t, eng, wait, n)
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
				CheckHops(t, r, "s0", "s1")
			}
			if s := stats(); s.Errors != int64(failed) || failed != 2 {
				t.Fatalf("errors: stats %d, seen %d, want 2", s.Errors, failed)
			}
			if s := stats(); tc.name == "timeout-ignores-ctx" && s.TimedOut != 2 {
				t.Fatalf("TimedOut = %d, want 2 abandoned calls", s.TimedOut)
			}
		})
	}
}

// testBackpressureBoundsAcceptance blocks the last stage and offers many
// records: the engine accepts no more than h.Bound, and Submit blocks.
func testBackpressureBoundsAcceptance(t *testing.T, h Harness) {
	block := make(chan struct{})
	defer close(block)
	sink := func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
		return emit(in)
	}
	g := Chain(2, 16, "noop", "noop", "sink")
	bound := h.Bound(g)
	eng, stats := h.New(t, Registry(t, map[string]dataflow.OperatorFunc{"noop": Noop, "sink": sink}), nil)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := eng.Deploy(ctx, g); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	submitted := make(chan error, 1)
	go func() {
		for i := range 20 * bound {
			if err := eng.Submit(ctx, dataflow.Record{ID: fmt.Sprint(i), Payload: make([]byte, 1024)}); err != nil {
				submitted <- err
				return
			}
		}
		submitted <- nil
	}()
	settle(stats)
	if s := stats().Submitted; s > int64(bound) || s == 0 {
		t.Fatalf("accepted %d records with the last stage blocked, want 1..%d", s, bound)
	}
	select {
	case err := <-submitted:
		t.Fatalf("Submit returned (%v) with the last stage blocked: no backpressure", err)
	default:
	}
	cancel()
	if err := <-served; !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Serve after cancel: %v, want the context's error", err)
	}
	if err := <-submitted; err == nil {
		t.Fatal("Submit kept succeeding after the run was cancelled")
	}
	for range eng.Results() {
	}
}

// settle waits until the accepted count has stopped growing for a while.
func settle(stats func() dataflow.Stats) {
	deadline := time.Now().Add(Timeout)
	last, still := int64(-1), 0
	for still < 40 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		if s := stats().Submitted; s == last && s > 0 {
			still++
		} else {
			last, still = s, 0
		}
	}
}

func testUnknownOperatorFailsDeploy(t *testing.T, h Harness) {
	eng, _ := h.New(t, Registry(t, map[string]dataflow.OperatorFunc{"embed": Noop, "retrieve": Noop}), nil)
	err := eng.Deploy(context.Background(), Chain(1, 1, "embed", "retreive"))
	var uo *dataflow.UnknownOperatorError
	if !errors.As(err, &uo) {
		t.Fatalf("Deploy: %v, want *UnknownOperatorError", err)
	}
	if uo.Stage != "s1" || uo.Operator != "retreive" || strings.Join(uo.Registered, ",") != "embed,retrieve" {
		t.Fatalf("error fields %+v", uo)
	}
	if err := eng.Submit(context.Background(), dataflow.Record{ID: "a"}); !errors.Is(err, dataflow.ErrNotDeployed) {
		t.Errorf("Submit on an undeployed engine: %v, want ErrNotDeployed", err)
	}
}

func testCancelStopsRun(t *testing.T, h Harness) {
	for _, timeout := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("timeout=%v", timeout), func(t *testing.T) {
			hang := func(ctx context.Context, _ dataflow.Record, _ func(dataflow.Record) error) error {
				<-ctx.Done()
				return ctx.Err()
			}
			eng, stats := h.New(t, Registry(t, map[string]dataflow.OperatorFunc{"hang": hang}), nil)
			ctx, cancel := context.WithCancel(context.Background())
			g := Chain(2, 4, "hang")
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
			if n := stats().TimedOut; n != 0 {
				t.Fatalf("TimedOut = %d after a cancel, want 0", n)
			}
		})
	}
}

// testFanOutFilterAndLateEmit: an operator emitting three outputs per
// input, one emitting nothing for some inputs, and an emit after Process
// returned.
func testFanOutFilterAndLateEmit(t *testing.T, h Harness) {
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
	dropOne := func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		if strings.HasSuffix(in.ID, ".1") {
			return nil // filtered out
		}
		return AppendOp("a")(context.Background(), in, emit)
	}
	eng, _, wait := Start(t, h, map[string]dataflow.OperatorFunc{"fan": fan, "drop": dropOne}, Chain(1, 4, "fan", "drop"), nil)
	got := RunAll(t, eng, wait, 5)
	if len(got) != 10 {
		t.Fatalf("got %d results, want 10 (5 inputs × 3 outputs, one in three filtered)", len(got))
	}
	r, ok := got["r0004.2"]
	if !ok || string(r.Payload) != "2|a" || r.Meta.Trace != "t-r0004" {
		t.Fatalf("child r0004.2 = %+v (present %v), want payload 2|a and the parent's metadata", r, ok)
	}
	CheckHops(t, r, "s0", "s1")
	lateMu.Lock()
	defer lateMu.Unlock()
	if err := late(dataflow.Record{ID: "zombie"}); !errors.Is(err, dataflow.ErrEmitClosed) {
		t.Fatalf("emit after Process returned: %v, want ErrEmitClosed", err)
	}
}

func testObserverSeesEveryStage(t *testing.T, h Harness) {
	var mu sync.Mutex
	events := map[string][]dataflow.Event{}
	obs := func(e dataflow.Event) {
		mu.Lock()
		ev := events[e.ID]
		if ev == nil {
			ev = make([]dataflow.Event, 2)
			events[e.ID] = ev
		}
		ev[int(e.Stage[1]-'0')] = e
		mu.Unlock()
	}
	eng, _, wait := Start(t, h, map[string]dataflow.OperatorFunc{"a": AppendOp("a")}, Chain(2, 4, "a", "a"), obs)
	got := RunAll(t, eng, wait, 50)
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

func testSubmitRejects(t *testing.T, h Harness) {
	eng, _, wait := Start(t, h, map[string]dataflow.OperatorFunc{"a": AppendOp("a")}, Chain(1, 1, "a"), nil)
	if err := eng.Submit(context.Background(), dataflow.Record{}); !errors.Is(err, dataflow.ErrEmptyID) {
		t.Errorf("empty ID: %v, want ErrEmptyID", err)
	}
	if err := eng.Deploy(context.Background(), Chain(1, 1, "a")); !errors.Is(err, dataflow.ErrDeployed) {
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

// testHopsSeparateQueueingFromService: one worker, a 2 ms operator, three
// records enqueued before Serve: each service ≥ 2 ms, the last queued ≥
// two services (lower bounds only).
func testHopsSeparateQueueingFromService(t *testing.T, h Harness) {
	const d = 2 * time.Millisecond
	slow := func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		time.Sleep(d)
		return emit(in)
	}
	eng, _ := h.New(t, Registry(t, map[string]dataflow.OperatorFunc{"slow": slow}), nil)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := eng.Deploy(ctx, Chain(1, 8, "slow")); err != nil {
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
		if s := r.Hops[0].Service(); s < d {
			t.Fatalf("%s: service %s, want ≥ %s", r.ID, s, d)
		}
		queued = append(queued, r.Hops[0].Queue())
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if len(queued) != 3 {
		t.Fatalf("%d results, want 3", len(queued))
	}
	if longest := slices.Max(queued); longest < 2*d {
		t.Fatalf("longest queueing %s, want ≥ %s", longest, 2*d)
	}
}

// testDuplicateIDsDroppedAndCounted: the last stage emits its input and
// then fails it, so the sink sees the output and then an error record of
// the same ID: the first is delivered, the second dropped and counted.
func testDuplicateIDsDroppedAndCounted(t *testing.T, h Harness) {
	emitThenFail := func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		if err := emit(in); err != nil {
			return err
		}
		return errors.New("failed after emitting")
	}
	eng, stats, wait := Start(t, h, map[string]dataflow.OperatorFunc{"a": AppendOp("a"), "ef": emitThenFail}, Chain(2, 8, "a", "ef"), nil)
	const n = 50
	got := RunAll(t, eng, wait, n)
	if len(got) != n {
		t.Fatalf("got %d results, want %d", len(got), n)
	}
	for id, r := range got {
		if r.Err != nil || string(r.Payload) != "x|a" {
			t.Fatalf("%s: %+v, want the output (it reached the sink first)", id, r)
		}
	}
	if s := stats(); s.Duplicates != n || s.Delivered != n || s.Errors != 0 {
		t.Fatalf("stats %+v, want %d duplicates dropped, %d delivered, 0 errors", s, n, n)
	}
}
