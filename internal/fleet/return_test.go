package fleet

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestRecordReturnDedup: a record a node publishes again (after a lost
// ack) is dropped by the stream (same Nats-Msg-Id); one that reaches the
// stream twice anyway (another message ID) is dropped by the coordinator
// and counted; every planned record is emitted once.
func TestRecordReturnDedup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc := embeddedConns(t, ctx, 1)[0]
	c, err := New(ctx, Config{NC: nc, Run: "dedup", Nodes: []Node{{Name: "w", Subject: "unused"}}, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	js, _ := natsjs.New(nc)
	plan := planOf(3)
	subject := c.prefix + "1"
	tl := newTally(Shard(plan, 1))
	msgs, stop, err := c.consume(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	pub := &publisher{js: js, subject: subject, node: "w", key: testKey}
	for _, r := range plan.Requests {
		pub.add(record.Request{ID: r.ID, Seq: r.Seq, OK: true})
	}
	pub.add(record.Request{ID: "p-00001", Seq: 1, OK: true}) // republished: same Nats-Msg-Id
	count, err := pub.flush(ctx)
	if err != nil || count != 4 {
		t.Fatalf("flush: %d, %v", count, err)
	}
	b, _ := json.Marshal(record.Request{ID: "p-00002", Seq: 2, Node: "w"})
	twice := nats.NewMsg(subject)
	twice.Data = b
	seal(testKey, "w", twice)
	twice.Header.Set(hdrMsgID, "another-id")
	if err := publishSync(ctx, js, twice); err != nil {
		t.Fatal(err)
	}
	d, _ := json.Marshal(doneMsg{Node: "w", Records: 3})
	done := nats.NewMsg(subject)
	done.Header.Set(hdrKind, kindDone)
	done.Data = d
	seal(testKey, "w", done)
	if err := publishSync(ctx, js, done); err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, c.stream)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.CachedInfo().State.Msgs; n != 5 {
		t.Fatalf("stream holds %d messages; want 5: the 3 records once, the copy under another ID, done", n)
	}
	var emitted []string
	c.collect(ctx, "1", workload.LoadPlan{Span: time.Second}, time.Now(), tl, msgs, func(r record.Request) { emitted = append(emitted, r.ID) })
	if len(emitted) != 3 || tl.dups != 1 || tl.missing() != 0 || !tl.complete() {
		t.Errorf("emitted %v, %d duplicates, %d missing; want the 3 records once and 1 duplicate", emitted, tl.dups, tl.missing())
	}
}

// testKey is the run key of these tests.
var testKey = jetstream.RunKey("0123456789abcdef0123456789abcdef", "test")

// embeddedConns starts an embedded JetStream server for tb and returns n
// connections to it; the cleanup closes them and shuts the server down.
func embeddedConns(tb testing.TB, ctx context.Context, n int) []*nats.Conn {
	tb.Helper()
	srv, err := jetstream.StartEmbedded(ctx, jetstream.ServerConfig{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Shutdown)
	ncs := make([]*nats.Conn, n)
	for i := range ncs {
		if ncs[i], err = nats.Connect(srv.URL()); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(ncs[i].Close)
	}
	return ncs
}
