package fleet

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/record"
)

// FuzzNodeRequest: whatever a coordinator (or anyone on the subject)
// sends, a node answers with an error or stores a part; it never panics
// and never starts a shard it does not hold whole.
func FuzzNodeRequest(f *testing.F) {
	f.Add([]byte(`{"op":"plan","key":"1","subject":"s","part":0,"parts":1,"plan":{"phase":"p","spec":{},"requests":[{"id":"p-1","seq":1,"at_ns":5,"item":{}}]}}`))
	f.Add([]byte(`{"op":"start","key":"1","start_ns":1,"base_ns":1}`))
	f.Add([]byte(`{"op":"stop","key":"1"}`))
	f.Add([]byte(`{"op":"plan","key":"1","part":3,"parts":2,"plan":{}}`))
	f.Add([]byte(`nonsense`))
	f.Add([]byte(`{"op":"plan","key":"1","subject":"s","part":0,"parts":1000000000000,"plan":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := &node{run: jetstream.ServiceRun{Worker: "w", Key: testKey}, shards: map[string]*shard{}}
		for range 2 { // the same message twice: a retried part, a second start
			if rep, ok := n.answer(context.Background(), data); ok && rep.Error == "" {
				for _, s := range n.shards {
					if s.cancel != nil {
						t.Fatalf("a shard started without a target: %q", data)
					}
				}
			}
		}
		n.wg.Wait()
	})
}

// FuzzRecordMessage: a message on a phase's record subject that is not a
// record or a done message of a known node is dropped and counted, never
// emitted, and never panics the coordinator.
func FuzzRecordMessage(f *testing.F) {
	f.Add("", []byte(`{"id":"p-00000","seq":0,"kind":"request","ok":true}`))
	f.Add("", []byte(`{"id":"zz"}`))
	f.Add(kindDone, []byte(`{"node":"a","records":2}`))
	f.Add(kindDone, []byte(`{"node":"nobody","records":-1}`))
	f.Add("", []byte(`{`))
	f.Fuzz(func(t *testing.T, kind string, data []byte) {
		c := &Coordinator{cfg: Config{Logf: func(string, ...any) {}, Key: testKey, Nodes: []Node{{Name: "a"}, {Name: "b"}}},
			byName: map[string]int{"a": 0, "b": 1}}
		tl := newTally(Shard(planOf(4), 2))
		m := &nats.Msg{Subject: "s", Data: data, Header: nats.Header{}}
		m.Header.Set(hdrKind, kind)
		seal(testKey, "a", m) // sealed by a node: the worst a token holder can send
		c.takeSealed("s", m.Header, data, tl, func(r record.Request) {
			if _, ok := tl.owner[r.ID]; !ok {
				t.Fatalf("emitted a record that was not planned: %q", r.ID)
			}
		})
		if kind == kindDone { // a node's own account: never a record
			if len(tl.got) != 0 {
				t.Fatalf("a done message counted as %d records", len(tl.got))
			}
			return
		}
		if len(tl.got) > 1 || tl.missing() < 3 {
			t.Fatalf("one message counted as %d records", len(tl.got))
		}
		for id := range tl.got {
			if tl.owner[id] != 0 {
				t.Fatalf("node a's message took %s, of node b's shard", id)
			}
		}
		// Unsealed, the same bytes are rejected whatever they say.
		tl = newTally(Shard(planOf(4), 2))
		c.takeSealed("s", nats.Header{hdrKind: []string{kind}, hdrNode: []string{"a"}}, data, tl, func(r record.Request) {
			t.Fatalf("emitted an unauthenticated record %q", r.ID)
		})
		if tl.rejectedN != 1 {
			t.Fatalf("an unsealed message: %d rejected, want 1", tl.rejectedN)
		}
	})
}
