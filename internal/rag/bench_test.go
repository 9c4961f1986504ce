package rag

import (
	"strings"
	"testing"
	"time"
)

// benchTxn is a transaction as it leaves generate at Q1's defaults:
// a 384-dimensional embedding, 5 passages of 32 words, three calls, 64
// streamed tokens.
func benchTxn() *Txn {
	at := time.Now()
	t := &Txn{Seq: 1, Query: strings.Repeat("word ", 8), QueryDoc: 3, TopK: 5, Vector: make([]float32, 384)}
	for i := range t.Vector {
		t.Vector[i] = float32(i) / 384
	}
	for i := range 5 {
		t.Hits = append(t.Hits, Hit{ID: i, Score: 0.5, Text: strings.Repeat("gaizou ", 32)})
	}
	for _, s := range []string{"embed", "retrieve", "generate"} {
		t.Calls = append(t.Calls, Call{Stage: s, Start: at, Sent: at, FirstByte: at, End: at, Status: 200, Engine: "e"})
	}
	for i := range 64 {
		t.Calls[2].Tokens = append(t.Calls[2].Tokens, at.Add(time.Duration(i)*time.Millisecond))
	}
	return t
}

// BenchmarkTxnCodec is what each stage spends on the payload: one decode
// and one encode.
func BenchmarkTxnCodec(b *testing.B) {
	t := benchTxn()
	buf := AppendTxn(nil, t)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		got, err := DecodeTxn(buf)
		if err != nil {
			b.Fatal(err)
		}
		buf = AppendTxn(buf[:0], got)
	}
}
