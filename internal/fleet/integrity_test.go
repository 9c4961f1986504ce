package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestRogueRecords: a client on the run's NATS server that knows the
// subjects and the planned IDs publishes forged records ahead of the node
// (Nats-Msg-Id = ID, the old attack; a forged node header and MAC),
// replays the node's own sealed messages, and one that knows neither
// publishes all over the run's subjects; a node holding the key writes
// into another node's shard. Only the genuine records are emitted, each
// once, and every rejected message is counted as an integrity failure.
func TestRogueRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ncs := embeddedConns(t, ctx, 2)
	nc, rogue := ncs[0], ncs[1]
	c, err := New(ctx, Config{NC: nc, Run: "rogue", Key: testKey,
		Nodes: []Node{{Name: "w", Subject: "unused"}, {Name: "v", Subject: "unused2"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	js, _ := natsjs.New(nc)
	rjs, _ := natsjs.New(rogue)
	plan := planOf(4) // w: p-00000, p-00002; v: p-00001, p-00003
	subject := c.prefix + "1"
	tl := newTally(Shard(plan, 2))
	msgs, stop, err := c.consume(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	forged := 0
	forge := func(subj string, hdr map[string]string, rec any) {
		b, _ := json.Marshal(rec)
		m := nats.NewMsg(subj)
		for k, v := range hdr {
			m.Header.Set(k, v)
		}
		m.Data = b
		if !strings.HasPrefix(subj, c.prefix) { // no stream there: a plain publish
			if err := rogue.PublishMsg(m); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := publishSync(ctx, rjs, m); err != nil {
			t.Fatal(err)
		}
		if subj == subject {
			forged++
		}
	}
	// Knowing subjects and IDs, ahead of the nodes.
	for _, r := range plan.Requests {
		owner := []string{"w", "v"}[r.Seq%2]
		fake := record.Request{ID: r.ID, Seq: r.Seq, Kind: "request", OK: true, E2EMs: 0.001, Node: owner}
		forge(subject, map[string]string{hdrMsgID: r.ID}, fake)
		forge(subject, map[string]string{hdrNode: owner, hdrMAC: strings.Repeat("ab", 32)}, fake)
	}
	forge(subject, map[string]string{hdrKind: kindDone, hdrNode: "v"}, doneMsg{Node: "v", Records: 0})
	// Knowing neither: other subjects of the run.
	forge(c.prefix+"999", nil, record.Request{ID: "x"})
	forge("sagebench.other.l.1", nil, record.Request{ID: "p-00000"})

	genuine := func(node string, ids ...string) {
		pub := &publisher{js: js, subject: subject, node: node, key: testKey}
		for _, id := range ids {
			pub.add(record.Request{ID: id, Kind: "request", OK: true, E2EMs: 42})
		}
		if _, err := pub.flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	genuine("w", "p-00000", "p-00002")
	genuine("v", "p-00001", "p-00003")
	// A key holder writing outside its shard: v claims w's ID.
	genuine("v", "p-00002")
	forged++
	// Replays of the node's own sealed messages, under another Msg-Id.
	sub, err := rogue.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := rogue.Flush(); err != nil { // the subscription is in place before the node publishes
		t.Fatal(err)
	}
	genuine("w", "p-00000") // seen by the rogue's subscription
	forged++                // (the republish itself: dropped by the stream's window, or as a duplicate)
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	replay := nats.NewMsg(subject)
	replay.Header, replay.Data = m.Header, m.Data
	replay.Header.Set(hdrMsgID, "replayed")
	if err := publishSync(ctx, rjs, replay); err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"w", "v"} {
		d, _ := json.Marshal(doneMsg{Node: node, Records: 2})
		done := nats.NewMsg(subject)
		done.Header.Set(hdrKind, kindDone)
		done.Data = d
		seal(testKey, node, done)
		if err := publishSync(ctx, js, done); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]record.Request{}
	c.collect(ctx, "1", workload.LoadPlan{Span: time.Second}, time.Now(), tl, msgs, func(r record.Request) {
		if _, dup := got[r.ID]; dup {
			t.Errorf("%s emitted twice", r.ID)
		}
		got[r.ID] = r
	})
	if len(got) != 4 {
		t.Fatalf("emitted %d records, want the 4 genuine ones", len(got))
	}
	for id, r := range got {
		if r.E2EMs != 42 || r.Node != []string{"w", "v"}[tl.owner[id]] {
			t.Errorf("%s: e2e %g from node %q: a forged record got in", id, r.E2EMs, r.Node)
		}
	}
	ie := tl.integrity()
	if ie == nil || ie.ByReason[rejectUnauth] != 9 || ie.ByReason[rejectForeign] != 1 {
		t.Fatalf("integrity %+v; want 9 unauthenticated (8 forged records, 1 done) and 1 foreign", ie)
	}
	if tl.dups < 1 {
		t.Errorf("%d duplicates; the replay is one", tl.dups)
	}
	rep := workload.LoadReport{}
	c.account("p", tl, &rep)
	if c.Integrity() == nil || !strings.Contains(strings.Join(c.Notes(), "\n"), "integrity failure") {
		t.Errorf("the run's notes do not report the integrity failure: %v", c.Notes())
	}
	_ = forged
}

// TestFloodBounded: 20,000 stray messages (4 KiB each, 80 MB) published
// on a phase's record subject while the coordinator reads it are counted
// and dropped, and the process's peak live heap grows by a bounded
// amount over a clean phase: the stream drops what was read and holds at
// most maxStreamBytes, the consumer is bounded, and no stray is kept; a genuine record either arrives or is
// counted missing. (The live heap after each GC, sampled
// every 2ms, is the measure: the embedded server runs in this process,
// as it does in the coordinator's.)
func TestFloodBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded NATS server and publishes 80 MB")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ncs := embeddedConns(t, ctx, 2)
	nc, rogue := ncs[0], ncs[1]
	c, err := New(ctx, Config{NC: nc, Run: "flood", Key: testKey, Nodes: []Node{{Name: "w", Subject: "flood-node"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The node answers the coordinator's pings (a slow phase under -race
	// would otherwise take it for gone).
	if _, err := nc.Subscribe("flood-node", func(m *nats.Msg) { _ = m.Respond([]byte("{}")) }); err != nil {
		t.Fatal(err)
	}
	js, _ := natsjs.New(nc)
	_, clean := floodPhase(t, ctx, c, js, rogue, "clean", 0)
	tl, flooded := floodPhase(t, ctx, c, js, rogue, "flood", 20_000)
	t.Logf("peak live heap: clean phase %.1f MB, with a 20,000-message flood %.1f MB (%.2f×); RSS now %s",
		float64(clean)/(1<<20), float64(flooded)/(1<<20), float64(flooded)/float64(clean), rss())
	if n := tl.rejectedN; n < 1 || n > 20_000 {
		t.Errorf("%d strays counted, want 1..20000 (the full stream refuses some)", n)
	}
	// Bounded, not proportional to the flood (80 MB of it; before the
	// bounds a flood of this count took a coordinator from 78 MB to
	// 1.16 GB RSS): the stream keeps at most 8 MiB, the consumer 2 MiB.
	// The bar is 1.5× of a clean coordinator of 78 MB, i.e. at
	// most 39 MB of growth; measured 18-24 MB at load 20-33 on 2 cores.
	if growth := int64(flooded) - int64(clean); growth > 39<<20 {
		t.Errorf("the flood grew the peak live heap by %d MB (clean %d MB, flooded %d MB); want ≤ 39 MB", growth>>20, clean>>20, flooded>>20)
	}
}

// floodPhase runs one phase of 200 genuine records while flood strays
// are published, the coordinator reading all along; it returns the
// tally and the peak heap in use.
func floodPhase(t *testing.T, ctx context.Context, c *Coordinator, js natsjs.JetStream, rogue *nats.Conn, key string, flood int) (*tally, uint64) {
	plan := workload.LoadPlan{Phase: key}
	for i := range 200 {
		plan.Requests = append(plan.Requests, workload.PlannedRequest{ID: fmt.Sprintf("%s-%05d", key, i), Seq: i})
	}
	subject := c.prefix + key
	tl := newTally(Shard(plan, 1))
	msgs, stop, err := c.consume(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	runtime.GC()
	peak, sampled := peakHeap()
	emitted, collected := 0, make(chan struct{})
	go func() {
		c.collect(ctx, key, workload.LoadPlan{Span: 30 * time.Second}, time.Now(), tl, msgs, func(record.Request) { emitted++ })
		close(collected)
	}()
	junk := []byte(strings.Repeat("x", 4<<10))
	for i := range flood {
		_ = rogue.Publish(subject, junk)
		if i%500 == 499 {
			_ = rogue.Flush()
		}
	}
	pub := &publisher{js: js, subject: subject, node: "w", key: testKey}
	for _, r := range plan.Requests {
		pub.add(record.Request{ID: r.ID, Seq: r.Seq, Kind: "request", OK: true})
	}
	if _, err := pub.flush(ctx); err != nil {
		t.Fatal(err)
	}
	d, _ := json.Marshal(doneMsg{Node: "w", Records: len(plan.Requests)})
	done := nats.NewMsg(subject)
	done.Header.Set(hdrKind, kindDone)
	done.Data = d
	seal(testKey, "w", done)
	if err := publishSync(ctx, js, done); err != nil {
		t.Fatal(err)
	}
	<-collected
	close(sampled)
	// A flood may push a genuine record out of the bounded stream before
	// it was read: then it is counted missing, never lost silently.
	if emitted+tl.missing() != len(plan.Requests) || (flood == 0 && emitted != len(plan.Requests)) {
		t.Fatalf("phase %s: %d of %d records emitted, %d counted missing", key, emitted, len(plan.Requests), tl.missing())
	}
	t.Logf("phase %s: %d of %d genuine records back, %d counted missing", key, emitted, len(plan.Requests), tl.missing())
	return tl, <-peak
}

// peakHeap samples the live heap every 2ms until stop is closed, then
// sends the peak.
func peakHeap() (<-chan uint64, chan struct{}) {
	out, stop := make(chan uint64, 1), make(chan struct{})
	go func() {
		var peak uint64
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out, stop
}

// rss is the process's resident set from /proc (Linux), for the log.
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return fmt.Sprintf("%d MB", kb>>10)
		}
	}
	return "unknown"
}

// TestPeerNumbersChecked: an authenticated node's record with a number
// no harness writes (a negative latency, offset or count) is rejected as
// malformed and counted, never emitted into the summary.
func TestPeerNumbersChecked(t *testing.T) {
	c := &Coordinator{cfg: Config{Nodes: []Node{{Name: "w"}}}}
	for _, tc := range []struct {
		name string
		rec  record.Request
		want string
	}{
		{"genuine", record.Request{ID: "p-00000", Node: "w", OK: true, E2EMs: 12, ServiceMs: 11, LagMs: 1}, ""},
		{"negative e2e", record.Request{ID: "p-00000", Node: "w", OK: true, E2EMs: -5}, rejectMalformed},
		{"negative end", record.Request{ID: "p-00000", Node: "w", OK: true, E2EMs: 5, EndNS: -1}, rejectMalformed},
		{"negative tokens", record.Request{ID: "p-00000", Node: "w", OK: true, E2EMs: 5, OutputTok: -7}, rejectMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTally(Shard(planOf(1), 1))
			data, _ := json.Marshal(tc.rec)
			emitted := 0
			if why := c.takeFrom(0, "", data, tl, func(record.Request) { emitted++ }); why != tc.want || (why == "") != (emitted == 1) {
				t.Fatalf("takeFrom: %q, %d emitted; want %q", why, emitted, tc.want)
			}
		})
	}
}
