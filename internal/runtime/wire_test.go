package runtime_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/runtime"
)

func TestWireRoundTrip(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 123456789)
	for _, tc := range []struct {
		name string
		r    runtime.Record
	}{
		{"zero", runtime.Record{}},
		{"id-only", runtime.Record{ID: "tx-1", Delivery: 1}},
		{"full", runtime.Record{
			ID: "tx-2", Payload: []byte(`{"q":"hi"}`), Delivery: 2,
			Meta: runtime.Metadata{Trace: "tr", Tenant: "alice", Intended: t0, Deadline: t0.Add(time.Second)},
			Hops: []runtime.Hop{{Stage: "embed", Enqueued: t0, Started: t0.Add(1), Ended: t0.Add(2)}, {Stage: "gen", Enqueued: t0.Add(3)}},
			Err:  &runtime.StageError{Stage: "gen", Operator: "generate", Kind: runtime.KindTimeout, Message: "slow"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := runtime.AppendRecord(nil, tc.r)
			got, err := runtime.DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normal(got), normal(tc.r)) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.r)
			}
			for i := range b { // every strict prefix is malformed
				if _, err := runtime.DecodeRecord(b[:i]); !errors.Is(err, runtime.ErrWire) {
					t.Fatalf("prefix of %d bytes: %v, want ErrWire", i, err)
				}
			}
			if _, err := runtime.DecodeRecord(append(b, 0)); !errors.Is(err, runtime.ErrWire) {
				t.Fatalf("trailing byte: %v, want ErrWire", err)
			}
		})
	}
}

// normal makes times comparable with DeepEqual (no monotonic reading, UTC)
// and empty slices nil.
func normal(r runtime.Record) runtime.Record {
	fix := func(t time.Time) time.Time {
		if t.IsZero() {
			return time.Time{}
		}
		return time.Unix(0, t.UnixNano()).UTC()
	}
	r.Meta.Intended, r.Meta.Deadline = fix(r.Meta.Intended), fix(r.Meta.Deadline)
	hops := make([]runtime.Hop, len(r.Hops))
	for i, h := range r.Hops {
		hops[i] = runtime.Hop{Stage: h.Stage, Enqueued: fix(h.Enqueued), Started: fix(h.Started), Ended: fix(h.Ended)}
	}
	r.Hops = hops
	if len(r.Payload) == 0 {
		r.Payload = nil
	}
	return r
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(runtime.AppendRecord(nil, runtime.Record{ID: "a", Payload: []byte("p"), Hops: []runtime.Hop{{Stage: "s"}}}))
	f.Add(runtime.AppendRecord(nil, runtime.Record{ID: "b", Err: &runtime.StageError{Kind: runtime.KindPanic}}))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := runtime.DecodeRecord(b)
		if err != nil {
			if !errors.Is(err, runtime.ErrWire) {
				t.Fatalf("error %v does not wrap ErrWire", err)
			}
			return
		}
		again, err := runtime.DecodeRecord(runtime.AppendRecord(nil, r))
		if err != nil || !reflect.DeepEqual(normal(again), normal(r)) {
			t.Fatalf("re-encoding a decoded record: %v\n got %+v\nwant %+v", err, again, r)
		}
	})
}
