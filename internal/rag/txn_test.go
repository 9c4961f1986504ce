package rag

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func fullTxn() *Txn {
	at := time.Unix(1_700_000_000, 123456789)
	return &Txn{Seq: 7, Query: "what is gaizou", QueryDoc: 42, TopK: 5,
		Vector: []float32{0.5, -0.25, 1e-7},
		Hits:   []Hit{{ID: 42, Score: 0.93, Text: "gaizou bratai"}, {ID: 3, Score: -0.1, Text: "ü ñ"}},
		Calls: []Call{
			{Stage: "embed", Start: at, Sent: at.Add(time.Microsecond), FirstByte: at.Add(time.Millisecond), End: at.Add(2 * time.Millisecond), Status: 200, Engine: "e-0", PromptTokens: 4},
			{Stage: "generate", Start: at, Sent: at, FirstToken: at.Add(30 * time.Millisecond), End: at.Add(50 * time.Millisecond),
				Tokens: []time.Time{at.Add(30 * time.Millisecond), at.Add(40 * time.Millisecond)}, Status: 200, Retries: 1, CompletionTokens: 2},
		}}
}

// equalTxn compares by encoding: decoding drops the times' location and
// monotonic reading, which the encoding does not carry either.
func equalTxn(a, b *Txn) bool {
	return reflect.DeepEqual(AppendTxn(nil, a), AppendTxn(nil, b))
}

func TestTxnRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		txn  *Txn
	}{
		{"empty", &Txn{}},
		{"query only", &Txn{Seq: 1, Query: "q", QueryDoc: -1}},
		{"full", fullTxn()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := AppendTxn(nil, tc.txn)
			got, err := DecodeTxn(b)
			if err != nil {
				t.Fatal(err)
			}
			if !equalTxn(got, tc.txn) {
				t.Fatalf("round trip changed the transaction:\n got %+v\nwant %+v", got, tc.txn)
			}
			if got.Seq != tc.txn.Seq || got.Query != tc.txn.Query || len(got.Calls) != len(tc.txn.Calls) {
				t.Fatalf("fields differ: %+v", got)
			}
			for i, c := range got.Calls {
				if !c.End.Equal(tc.txn.Calls[i].End) || c.Stage != tc.txn.Calls[i].Stage {
					t.Fatalf("call %d: %+v", i, c)
				}
			}
		})
	}
}

func TestDecodeTxnRejectsEveryTruncation(t *testing.T) {
	b := AppendTxn(nil, fullTxn())
	for n := range len(b) {
		if _, err := DecodeTxn(b[:n]); !errors.Is(err, ErrPayload) {
			t.Fatalf("prefix of %d/%d bytes: err = %v, want ErrPayload", n, len(b), err)
		}
	}
	if _, err := DecodeTxn(append(b, 0)); !errors.Is(err, ErrPayload) {
		t.Fatalf("trailing byte: err = %v", err)
	}
	bad := append([]byte{9}, b[1:]...)
	if _, err := DecodeTxn(bad); !errors.Is(err, ErrPayload) {
		t.Fatalf("wrong version: err = %v", err)
	}
}

func TestDecodeTxnBoundsLengths(t *testing.T) {
	// version, seq 0, empty query, doc 0, topk 0, then a vector length of
	// 2^40 with no data: must fail, not allocate.
	b := []byte{wireVersion, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20}
	if _, err := DecodeTxn(b); !errors.Is(err, ErrPayload) {
		t.Fatalf("err = %v", err)
	}
}

func TestCallReplacesSameStage(t *testing.T) {
	tx := &Txn{}
	tx.setCall(Call{Stage: "embed", Status: 500})
	tx.setCall(Call{Stage: "embed", Status: 200})
	tx.setCall(Call{Stage: "retrieve", Status: 200})
	if len(tx.Calls) != 2 {
		t.Fatalf("calls = %+v, want one per stage", tx.Calls)
	}
	if c, ok := tx.Call("embed"); !ok || c.Status != 200 {
		t.Fatalf("embed call = %+v, %v", c, ok)
	}
	if _, ok := tx.Call("generate"); ok {
		t.Fatal("generate call found in a transaction without one")
	}
}

func FuzzDecodeTxn(f *testing.F) {
	f.Add(AppendTxn(nil, fullTxn()))
	f.Add(AppendTxn(nil, &Txn{}))
	f.Add([]byte{})
	f.Add([]byte{wireVersion, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		tx, err := DecodeTxn(b)
		if err != nil {
			if !errors.Is(err, ErrPayload) {
				t.Fatalf("error does not wrap ErrPayload: %v", err)
			}
			return
		}
		again, err := DecodeTxn(AppendTxn(nil, tx))
		if err != nil {
			t.Fatalf("re-encoding a decoded payload: %v", err)
		}
		if !equalTxn(again, tx) {
			t.Fatal("decode(encode(decode(b))) differs from decode(b)")
		}
	})
}

func TestParseCallError(t *testing.T) {
	tests := []struct {
		name, msg string
		class     string
		status    int
		ok        bool
	}{
		{"http 5xx", (&CallError{Stage: "retrieve", Class: "http_5xx", Status: 500, Err: errors.New("boom")}).Error(), "http_5xx", 500, true},
		{"timeout no status", (&CallError{Stage: "generate", Class: "timeout", Err: errors.New("slow")}).Error(), "timeout", 0, true},
		{"payload", payloadError("embed", errors.New("x")).Error(), ClassPayload, 0, true},
		{"unknown class", "oops (status 500): x", "", 0, false},
		{"no status", "http_5xx: x", "", 0, false},
		{"bad status", "http_5xx (status 5000): x", "", 0, false},
		{"empty", "", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			class, status, ok := ParseCallError(tc.msg)
			if class != tc.class || status != tc.status || ok != tc.ok {
				t.Fatalf("ParseCallError(%q) = %q, %d, %v; want %q, %d, %v", tc.msg, class, status, ok, tc.class, tc.status, tc.ok)
			}
		})
	}
}

func FuzzParseCallError(f *testing.F) {
	f.Add("http_5xx (status 500): retrieve request failed: boom")
	f.Add("x (status )")
	f.Fuzz(func(t *testing.T, msg string) {
		class, status, ok := ParseCallError(msg)
		if ok && (class == "" || status < 0 || status > 999) {
			t.Fatalf("ParseCallError(%q) = %q, %d, true", msg, class, status)
		}
	})
}
