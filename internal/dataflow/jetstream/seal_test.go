package jetstream

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow"
)

// TestSealedGraphRejectsForgeries: on a run sealed with its key, a rogue
// client of the same server publishes into the graph — before the run, a
// record under the Msg-Id the first genuine record would have if ids were
// predictable; while it runs, an unsealed record into the second stage, an unsealed result, a result
// sealed with another run's key and a genuinely sealed result whose credit
// was altered in flight. None of them reaches Results or the drain's
// credit; all five are counted as rejected (the stage's through the
// sealed notice its runner publishes), and the genuine records all come
// back.
func TestSealedGraphRejectsForgeries(t *testing.T) {
	srv, err := StartEmbedded(context.Background(), ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	const run, token = "sealtest", "0123456789abcdef0123456789abcdef"
	key := RunKey(token, run)
	release := make(chan struct{})
	reg := dataflow.NewRegistry()
	_ = reg.RegisterFunc("gate", func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return emit(in)
	})
	_ = reg.RegisterFunc("same", func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error { return emit(in) })
	eng, err := New(Config{Conn: ConnConfig{URL: srv.URL()}, Registry: reg, Run: run, Key: key, AckWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	g := dataflow.Graph{Name: "sealed", Stages: []dataflow.StageConfig{{Name: "gate", Operator: "gate"}, {Name: "same", Operator: "same"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := eng.Deploy(ctx, g); err != nil {
		t.Fatal(err)
	}
	// The rogue claims record "0"'s Msg-Id before the coordinator submits
	// it: the stream would drop the genuine message as its duplicate if
	// the id were the record's own.
	preempt(ctx, t, srv.URL(), names{run: run})
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	for i := range 3 {
		if err := eng.Submit(ctx, dataflow.Record{ID: strconv.Itoa(i), Payload: []byte("genuine")}); err != nil {
			t.Fatal(err)
		}
	}
	eng.CloseInput()

	forge(ctx, t, srv.URL(), names{run: run}, key)
	for eng.Stats().Rejected < 5 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	var ids []string
	for r := range eng.Results() {
		ids = append(ids, r.ID)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if st := eng.Stats(); !slices.Equal(ids, []string{"0", "1", "2"}) || st.Rejected != 5 || st.Delivered != 3 {
		t.Errorf("results %v, delivered %d, rejected %d; want the 3 genuine records and 5 rejected", ids, st.Delivered, st.Rejected)
	}
}

// preempt publishes, unsealed, a record under the Msg-Id a genuine
// record "0" would have if ids were predictable.
func preempt(ctx context.Context, t *testing.T, url string, n names) {
	t.Helper()
	js := rogue(t, url)
	m := nats.NewMsg(n.stageSubject(0))
	m.Header.Set(hdrMsgID, "0")
	m.Header.Set(hdrCredit, strconv.FormatUint(unit, 10))
	m.Data = dataflow.AppendRecord(nil, dataflow.Record{ID: "0", Payload: []byte("forged"), Hops: []dataflow.Hop{{Stage: "gate"}}})
	if _, err := js.PublishMsg(ctx, m); err != nil {
		t.Fatalf("publishing the preemptive forgery: %v", err)
	}
}

// forge publishes the rogue's four messages into run n's graph.
func forge(ctx context.Context, t *testing.T, url string, n names, key []byte) {
	t.Helper()
	js := rogue(t, url)
	stage := nats.NewMsg(n.stageSubject(1))
	stage.Header.Set(hdrMsgID, "forged-stage")
	stage.Header.Set(hdrCredit, strconv.FormatUint(unit, 10))
	stage.Data = dataflow.AppendRecord(nil, dataflow.Record{ID: "forged-stage", Hops: []dataflow.Hop{{Stage: "same"}}})
	out := n.resultMsg(n.resultsSubject(), kindOut, "o/forged-out", dataflow.Record{ID: "forged-out"}, unit)
	other := n.resultMsg(n.resultsSubject(), kindOut, "o/other-run", dataflow.Record{ID: "other-run"}, unit)
	seal(other, RunKey("fedcba9876543210fedcba9876543210", n.run), "w1")
	altered := n.resultMsg(n.resultsSubject(), kindRet, "c/gate/0", dataflow.Record{ID: "0"}, 1)
	seal(altered, key, "w1")                                      // a genuine credit return, captured…
	altered.Header.Set(hdrCredit, strconv.FormatUint(3*unit, 10)) // …and inflated to end the run early
	for _, m := range []*nats.Msg{stage, out, other, altered} {
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatalf("publishing the forgery on %s: %v", m.Subject, err)
		}
	}
}

// rogue is a client of the run's server that holds no run key.
func rogue(t *testing.T, url string) natsjs.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
