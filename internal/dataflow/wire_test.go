package dataflow_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
)

func TestWireRoundTrip(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 123456789)
	for _, tc := range []struct {
		name string
		r    dataflow.Record
	}{
		{"zero", dataflow.Record{}},
		{"id-only", dataflow.Record{ID: "tx-1", Delivery: 1}},
		{"full", dataflow.Record{
			ID: "tx-2", Payload: []byte(`{"q":"hi"}`), Delivery: 2,
			Meta: dataflow.Metadata{Trace: "tr", Tenant: "alice", Intended: t0, Deadline: t0.Add(time.Second)},
			Hops: []dataflow.Hop{{Stage: "embed", Enqueued: t0, Started: t0.Add(1), Ended: t0.Add(2)}, {Stage: "gen", Enqueued: t0.Add(3)}},
			Err:  &dataflow.StageError{Stage: "gen", Operator: "generate", Kind: dataflow.KindTimeout, Message: "slow"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := dataflow.AppendRecord(nil, tc.r)
			got, err := dataflow.DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normal(got), normal(tc.r)) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.r)
			}
			for i := range b { // every strict prefix is malformed
				if _, err := dataflow.DecodeRecord(b[:i]); !errors.Is(err, dataflow.ErrWire) {
					t.Fatalf("prefix of %d bytes: %v, want ErrWire", i, err)
				}
			}
			if _, err := dataflow.DecodeRecord(append(b, 0)); !errors.Is(err, dataflow.ErrWire) {
				t.Fatalf("trailing byte: %v, want ErrWire", err)
			}
		})
	}
}

// normal makes times comparable with DeepEqual (no monotonic reading, UTC)
// and empty slices nil.
func normal(r dataflow.Record) dataflow.Record {
	fix := func(t time.Time) time.Time {
		if t.IsZero() {
			return time.Time{}
		}
		return time.Unix(0, t.UnixNano()).UTC()
	}
	r.Meta.Intended, r.Meta.Deadline = fix(r.Meta.Intended), fix(r.Meta.Deadline)
	hops := make([]dataflow.Hop, len(r.Hops))
	for i, h := range r.Hops {
		hops[i] = dataflow.Hop{Stage: h.Stage, Enqueued: fix(h.Enqueued), Started: fix(h.Started), Ended: fix(h.Ended)}
	}
	r.Hops = hops
	if len(r.Payload) == 0 {
		r.Payload = nil
	}
	return r
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(dataflow.AppendRecord(nil, dataflow.Record{ID: "a", Payload: []byte("p"), Hops: []dataflow.Hop{{Stage: "s"}}}))
	f.Add(dataflow.AppendRecord(nil, dataflow.Record{ID: "b", Err: &dataflow.StageError{Kind: dataflow.KindPanic}}))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := dataflow.DecodeRecord(b)
		if err != nil {
			if !errors.Is(err, dataflow.ErrWire) {
				t.Fatalf("error %v does not wrap ErrWire", err)
			}
			return
		}
		again, err := dataflow.DecodeRecord(dataflow.AppendRecord(nil, r))
		if err != nil || !reflect.DeepEqual(normal(again), normal(r)) {
			t.Fatalf("re-encoding a decoded record: %v\n got %+v\nwant %+v", err, again, r)
		}
	})
}
