package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/fleet"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/target/targettest"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// startFleet starts an embedded server, opens a run without a graph and
// has n in-process workers join it with the load service against
// targetURL; it returns the coordinator.
func startFleet(t *testing.T, n int, targetURL string) *fleet.Coordinator {
	t.Helper()
	c, _ := startFleetWith(t, n, func(ctx context.Context, s fleet.ClientSettings) (*target.Target, error) {
		if s != testClient {
			t.Errorf("a node opened its target with %+v, not the run's client settings %+v", s, testClient)
		}
		return target.Open(ctx, s.Apply(target.Config{URL: targetURL}), target.Options{})
	})
	return c
}

// testToken is the join token of these tests' runs.
const testToken = "fleet-test-join-token-0123456789abcdef"

// testClient are the run's target client settings in these tests.
var testClient = fleet.ClientSettings{Timeout: 20 * time.Second, FirstByteTimeout: 10 * time.Second, MaxConns: 32, MaxBytesInFlight: 1 << 24}

// startFleetWith is startFleet with the nodes' target opener (nil: none);
// it also returns each worker's NATS connection.
func startFleetWith(t *testing.T, n int, opener func(context.Context, fleet.ClientSettings) (*target.Target, error)) (*fleet.Coordinator, []*nats.Conn) {
	t.Helper()
	return startFleetConfig(t, n, fleet.NodeConfig{Target: opener})
}

// startFleetConfig is startFleet with the nodes' configuration.
func startFleetConfig(t *testing.T, n int, node fleet.NodeConfig) (*fleet.Coordinator, []*nats.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	srv, err := jetstream.StartEmbedded(ctx, jetstream.ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	eng, err := jetstream.New(jetstream.Config{Conn: jetstream.ConnConfig{URL: srv.URL()}, RemoteOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wctx, stopWorkers := context.WithCancel(context.Background())
	t.Cleanup(func() { eng.Close(); stopWorkers(); wg.Wait() }) // Close ends the run: the workers leave
	var conns []*nats.Conn
	for i := range n {
		nc, err := nats.Connect(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		conns = append(conns, nc)
		w, err := jetstream.NewWorker(jetstream.WorkerConfig{NC: nc, Run: eng.Run(), JoinToken: testToken,
			Registry: dataflow.NewRegistry(), Name: "node-" + string(rune('a'+i)), Service: node.Service()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Close)
		wg.Go(func() {
			if err := w.Serve(wctx); err != nil {
				t.Errorf("worker: %v", err)
			}
		})
	}
	if err := eng.WaitWorkers(ctx, n); err != nil {
		t.Fatal(err)
	}
	c, err := fleet.New(ctx, fleet.Config{NC: eng.Conn(), Run: eng.Run(), Nodes: fleet.NodesOf(eng.Workers()), Lead: 100 * time.Millisecond, Tail: 10 * time.Second, Client: testClient,
		Key: jetstream.RunKey(testToken, eng.Run())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c, conns
}

// TestPhaseOnFleet: a small open-loop phase sent by two nodes against
// the fake target comes back whole: every planned ID once, with its
// intended time on the global schedule, a send lag, the node that sent
// it, and the coordinator's SLO verdict.
func TestPhaseOnFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	fake := targettest.NewServer(targettest.OK)
	defer fake.Close()
	c := startFleet(t, 2, fake.URL)
	sched, err := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessConstant, Rate: 100, Count: 40}, 1)
	if err != nil {
		t.Fatal(err)
	}
	items := make([]traffic.Item, sched.Len())
	for i := range items {
		items[i] = traffic.Item{Type: protocol.TypeLLM, Tenant: "t", Priority: protocol.PriorityNormal, Text: uint64(i)}
	}
	var mu sync.Mutex
	got := map[string]record.Request{}
	env := &workload.Env{Start: time.Now(), Log: io.Discard, Sent: func() {}, Load: c,
		Record: func(r record.Request) { mu.Lock(); got[r.ID] = r; mu.Unlock() }}
	ph := traffic.Phase{Name: "fl", Schedule: sched, Items: items,
		Shapes:   traffic.Shapes{LLM: traffic.LLMShape{Model: "m", MaxTokens: 4, PromptWords: 8, Stream: true}},
		Deadline: func(traffic.Item) time.Duration { return time.Second },
		SLOMet:   func(r *record.Request) bool { return r.E2EMs < 5000 }}
	sp := ph.Run(context.Background(), env, 100)
	if sp.Interrupted || sp.Scheduled != 40 || sp.Start <= 0 || sp.End < sp.Start+sched.Offsets[39] {
		t.Fatalf("phase %+v", sp)
	}
	if len(got) != 40 {
		t.Fatalf("%d records, want 40", len(got))
	}
	nodes := map[string]int{}
	for i := range 40 {
		r, ok := got[fmt.Sprintf("fl-%05d", 100+i)]
		if !ok {
			t.Fatalf("record of seq %d missing", 100+i)
		}
		nodes[r.Node]++
		want := sp.Start + sched.Offsets[i]
		// Intended = the published start + the offset, on the run's
		// clock (the node's offset cancels out): exact up to the wall
		// clock's slew against the monotonic one.
		if d := time.Duration(r.IntendedNS) - want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("%s intended at %v, want %v on the global schedule", r.ID, time.Duration(r.IntendedNS), want)
		}
		if !r.OK || !r.SLOMet || r.LagMs < 0 || r.Seq != 100+i || r.Phase != "fl" || r.Kind != "request" {
			t.Errorf("record %+v", r)
		}
	}
	if nodes["node-a"] != 20 || nodes["node-b"] != 20 {
		t.Errorf("records per node %v, want 20 each (i mod 2)", nodes)
	}
	if fake.Count("chat") != 40 {
		t.Errorf("the target saw %d chats, want 40", fake.Count("chat"))
	}
	notes := strings.Join(c.Notes(), "\n")
	for _, want := range []string{"load generated by 2 nodes", "i mod N", "load node node-a: clock offset", "20/20 requests back over 1 phases", "its driver started at most"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// tinyPhase is a phase of n chats at 100 req/s.
func tinyPhase(t *testing.T, name string, n int) traffic.Phase {
	t.Helper()
	sched, err := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessConstant, Rate: 100, Count: n}, 1)
	if err != nil {
		t.Fatal(err)
	}
	items := make([]traffic.Item, n)
	for i := range items {
		items[i] = traffic.Item{Type: protocol.TypeLLM, Tenant: "t", Priority: protocol.PriorityNormal, Text: uint64(i)}
	}
	return traffic.Phase{Name: name, Schedule: sched, Items: items,
		Shapes: traffic.Shapes{LLM: traffic.LLMShape{Model: "m", MaxTokens: 4, PromptWords: 8, Stream: true}}}
}

// TestFleetNodeWithoutTarget: a node that cannot open a target refuses
// its shard; the phase is cut short, the fleet's error names the node
// and the fix, and later phases fail at once with the same error (the
// runner then exits 1 instead of measuring with a broken fleet).
func TestFleetNodeWithoutTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	c, _ := startFleetWith(t, 1, nil)
	var recs int
	env := &workload.Env{Start: time.Now(), Log: io.Discard, Sent: func() {}, Load: c, Record: func(record.Request) { recs++ }}
	sp := tinyPhase(t, "a", 3).Run(context.Background(), env, 0)
	if !sp.Interrupted || recs != 0 {
		t.Errorf("phase %+v with %d records; want interrupted, none", sp, recs)
	}
	first := c.Err()
	if first == nil || !strings.Contains(first.Error(), "node-a") || !strings.Contains(first.Error(), "--target") {
		t.Fatalf("fleet error %v; want it to name node-a and --target", first)
	}
	if _, err := c.RunLoad(context.Background(), workload.LoadPlan{Phase: "b"}, func(record.Request) {}); err != first {
		t.Errorf("a later phase: %v, want the first error again", err)
	}
}

// TestPhaseOnFleetInterrupted: cancelling the run mid-phase stops every
// node (they drain like a local driver); the phase is interrupted, the
// records of the requests the nodes sent all come back, and the ones
// never sent are not counted missing.
func TestPhaseOnFleetInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	fake := targettest.NewServer(targettest.OK)
	defer fake.Close()
	c := startFleet(t, 2, fake.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var recs int
	env := &workload.Env{Start: time.Now(), Log: io.Discard, Sent: func() {}, Load: c, Drain: time.Second,
		Record: func(record.Request) {
			if recs++; recs == 10 {
				cancel() // a tenth of the way into a 4 s phase
			}
		}}
	sp := tinyPhase(t, "cut", 400).Run(ctx, env, 0)
	if !sp.Interrupted || recs < 10 || recs >= 400 {
		t.Fatalf("phase %+v with %d records; want interrupted after 10", sp, recs)
	}
	rep, err := c.RunLoad(context.Background(), workload.LoadPlan{Phase: "next", Spec: []byte(`{"shapes":{}}`)}, func(record.Request) {})
	if err != nil || rep.Missing != 0 || rep.Interrupted {
		t.Errorf("an empty phase after the interrupted one: %+v, %v", rep, err)
	}
	for _, n := range c.Notes() {
		if strings.Contains(n, "never came back") {
			t.Errorf("unsent requests noted as lost: %s", n)
		}
	}
}

// TestFleetNodeLost: a node whose connection dies mid-phase stops
// answering pings; the coordinator stops waiting for it within seconds
// (not the phase's bound of a minute), keeps every record of the other
// node, counts the lost node's unreturned share missing, records each of
// those requests as failed (node_lost, the node named) and fails the
// fleet with a *workload.NodeLostError naming the node.
func TestFleetNodeLost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	fake := targettest.NewServer(targettest.OK)
	defer fake.Close()
	c, conns := startFleetWith(t, 2, func(ctx context.Context, s fleet.ClientSettings) (*target.Target, error) {
		return target.Open(ctx, s.Apply(target.Config{URL: fake.URL}), target.Options{})
	})
	nodes, lostRecs := map[string]int{}, map[string]int{}
	env := &workload.Env{Start: time.Now(), Log: io.Discard, Sent: func() {}, Load: c, Drain: time.Second,
		Record: func(r record.Request) {
			if r.ErrorClass == fleet.ClassNodeLost {
				if r.OK || r.IntendedNS <= 0 || !strings.Contains(r.Error, "node-b") {
					t.Errorf("lost record %+v", r)
				}
				lostRecs[r.Node]++
				return
			}
			if nodes[r.Node]++; nodes[r.Node] == 5 && r.Node == "node-b" {
				conns[1].Close() // node-b's link is cut
			}
		}}
	sp := tinyPhase(t, "lost", 200).Run(context.Background(), env, 0)
	err := c.Err() // "stopped answering" comes from the pings, not from the phase's bound

	var lost *workload.NodeLostError
	if !sp.Interrupted || !errors.As(err, &lost) || lost.Node != "node-b" || !strings.Contains(err.Error(), "load node node-b stopped answering") {
		t.Fatalf("phase %+v, fleet error %v; want interrupted and node-b named", sp, err)
	}
	if nodes["node-a"] != 100 || nodes["node-b"] >= 100 || lostRecs["node-b"] != 100-nodes["node-b"] || lostRecs["node-b"] != lost.Missing || lostRecs["node-a"] != 0 {
		t.Errorf("records per node %v, failed as node_lost %v (error says %d); want all 100 of node-a, node-b's missing ones failed", nodes, lostRecs, lost.Missing)
	}
	notes := strings.Join(c.Notes(), "\n")
	if !strings.Contains(notes, "never came back (node-b stopped answering mid-phase") {
		t.Errorf("notes do not name the lost node:\n%s", notes)
	}
}

// TestOverlappingPhasesOnFleet: two phases sent at the same time (two
// streams of one Q) each get exactly their own records back.
func TestOverlappingPhasesOnFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	fake := targettest.NewServer(targettest.OK)
	defer fake.Close()
	c := startFleet(t, 2, fake.URL)
	var mu sync.Mutex
	byPhase := map[string]int{}
	env := &workload.Env{Start: time.Now(), Log: io.Discard, Sent: func() {}, Load: c,
		Record: func(r record.Request) { mu.Lock(); byPhase[r.Phase]++; mu.Unlock() }}
	var wg sync.WaitGroup
	for i, name := range []string{"x", "y"} {
		wg.Go(func() {
			if sp := tinyPhase(t, name, 20).Run(context.Background(), env, 100*i); sp.Interrupted {
				t.Errorf("phase %s interrupted", name)
			}
		})
	}
	wg.Wait()
	if byPhase["x"] != 20 || byPhase["y"] != 20 || len(byPhase) != 2 {
		t.Errorf("records per phase %v, want 20 each", byPhase)
	}
}

// TestFleetNodesUseTheRunsTokenizer: with --nodes, every node sends
// its shard with prompts synthesized in the run's tokenizer (the plan
// carries its spec), not the default one, and the records come back
// with their items' input lengths.
func TestFleetNodesUseTheRunsTokenizer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	fake := targettest.NewServer(targettest.OK)
	defer fake.Close()
	var mu sync.Mutex
	seen := map[string]int{}
	send := func(ctx context.Context, env *workload.Env, sh *traffic.Shard, start time.Time) load.Report {
		mu.Lock()
		seen[env.Prompts.Tokenizer().Name()]++
		mu.Unlock()
		return sh.Send(ctx, env, start)
	}
	c, _ := startFleetConfig(t, 2, fleet.NodeConfig{Send: send, Target: func(ctx context.Context, s fleet.ClientSettings) (*target.Target, error) {
		return target.Open(ctx, s.Apply(target.Config{URL: fake.URL}), target.Options{})
	}})
	tok, err := tokenizer.Load(tokenizer.O200K)
	if err != nil {
		t.Fatal(err)
	}
	synth, err := shape.NewSynth(tok)
	if err != nil {
		t.Fatal(err)
	}
	ph := tinyPhase(t, "tk", 8)
	var got []int
	env := &workload.Env{Start: time.Now(), Log: io.Discard, Sent: func() {}, Load: c, Prompts: synth, Tokenizer: tokenizer.RefOf(tokenizer.O200K, synth.Tokenizer()),
		Record: func(r record.Request) { mu.Lock(); got = append(got, r.InputTokens); mu.Unlock() }}
	for i := range ph.Items {
		ph.Items[i].In, ph.Items[i].Out = 300, 4
	}
	if sp := ph.Run(context.Background(), env, 0); sp.Interrupted {
		t.Fatalf("phase %+v: %v", sp, c.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[tokenizer.O200K] != 2 || len(seen) != 1 {
		t.Errorf("the nodes sent their shards with tokenizers %v, want o200k_base on both", seen)
	}
	if len(got) != 8 || slices.ContainsFunc(got, func(n int) bool { return n != 300 }) {
		t.Errorf("input tokens of the records %v, want 300 each", got)
	}
}
