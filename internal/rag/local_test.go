package rag_test

import (
	"context"
	"testing"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/rag"
)

func TestLocalRetrieval(t *testing.T) {
	ix, err := corpus.New(corpus.Config{Size: 50, Dim: 16, Seed: 3}, func(s string) []float32 { return corpus.Vector(s, 16) })
	if err != nil {
		t.Fatal(err)
	}
	l := rag.LocalRetrieval{Index: ix}
	q := ix.Vec(7)
	res := l.Retrieve(context.Background(), openai.RetrieveRequest{Embedding: q, TopK: 3})
	want, _ := ix.Exact(q, 3)
	if res.Err != nil || res.Status != 200 || res.Engine != rag.HarnessEngine || len(res.Docs) != 3 || res.End.Before(res.Start) {
		t.Fatalf("result %+v", res)
	}
	for i, d := range res.Docs {
		if d.ID != want[i].ID || d.Text != want[i].Text {
			t.Errorf("doc %d = %d, want %d", i, d.ID, want[i].ID)
		}
	}
	if res := l.Retrieve(context.Background(), openai.RetrieveRequest{Embedding: []float32{1}, TopK: 3}); res.ErrClass != openai.ClassMalformed {
		t.Errorf("wrong dimension: class %q, err %v", res.ErrClass, res.Err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := l.Retrieve(ctx, openai.RetrieveRequest{Embedding: q, TopK: 3}); res.ErrClass != openai.ClassCanceled {
		t.Errorf("cancelled: class %q", res.ErrClass)
	}
}
