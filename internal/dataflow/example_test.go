package dataflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
)

// txn is the payload of one RAG transaction as it moves through Q1's
// stages; each stage fills in its part.
type txn struct {
	Query  string    `json:"query"`
	Vector []float32 `json:"vector,omitempty"`
	Docs   []string  `json:"docs,omitempty"`
	Answer string    `json:"answer,omitempty"`
}

// jsonStage adapts a function on txn to an operator that decodes the
// payload, applies f and emits the re-encoded payload under the same ID.
func jsonStage(f func(context.Context, *txn) error) dataflow.OperatorFunc {
	return func(ctx context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		var t txn
		if err := json.Unmarshal(in.Payload, &t); err != nil {
			return fmt.Errorf("decoding payload: %w", err)
		}
		if err := f(ctx, &t); err != nil {
			return err
		}
		out := in
		var err error
		if out.Payload, err = json.Marshal(t); err != nil {
			return err
		}
		return emit(out)
	}
}

// Fake operators standing in for Q1's HTTP calls: embed (POST
// /v1/embeddings), retrieve (the vector index), generate (a streamed chat
// completion). Each is deterministic, so redeliveries are harmless.
var corpus = []string{"doc-go", "doc-nats", "doc-rag", "doc-yaml"}

func embed(_ context.Context, t *txn) error {
	h := fnv.New32a()
	h.Write([]byte(t.Query))
	s := h.Sum32()
	t.Vector = []float32{float32(s % 7), float32(s % 11), float32(s % 13)}
	return nil
}

func retrieve(_ context.Context, t *txn) error {
	k := int(t.Vector[0]+t.Vector[1]+t.Vector[2]) % len(corpus)
	t.Docs = []string{corpus[k], corpus[(k+1)%len(corpus)]}
	return nil
}

func generate(ctx context.Context, t *txn) error {
	var b strings.Builder
	for _, tok := range []string{"answer", "from", t.Docs[0], "and", t.Docs[1]} {
		if err := ctx.Err(); err != nil { // a real stream checks per chunk
			return err
		}
		b.WriteString(tok + " ")
	}
	t.Answer = strings.TrimSpace(b.String())
	return nil
}

func Example_ragPipeline() {
	reg := dataflow.NewRegistry()
	for name, f := range map[string]func(context.Context, *txn) error{
		"source":   func(_ context.Context, t *txn) error { t.Query = strings.TrimSpace(t.Query); return nil },
		"embed":    embed,
		"retrieve": retrieve,
		"generate": generate,
		"sink":     func(context.Context, *txn) error { return nil },
	} {
		if err := reg.RegisterFunc(name, jsonStage(f)); err != nil {
			panic(err)
		}
	}
	graph := dataflow.Graph{Name: "q1", Parallelism: 2, Stages: []dataflow.StageConfig{
		{Name: "source", Operator: "source"},
		{Name: "embed", Operator: "embed", Timeout: 5 * time.Second},
		{Name: "retrieve", Operator: "retrieve"},
		{Name: "generate", Operator: "generate", Parallelism: 4, Timeout: 30 * time.Second},
		{Name: "sink", Operator: "sink"},
	}}
	eng, err := dataflow.NewLocal(reg, dataflow.LocalOptions{Serialize: true})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if err := eng.Deploy(ctx, graph); err != nil {
		panic(err)
	}
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx) }()
	go func() {
		for i, q := range []string{"what is go", "what is nats", "what is rag"} {
			p, _ := json.Marshal(txn{Query: q})
			id := fmt.Sprintf("tx-%d", i)
			meta := dataflow.Metadata{Trace: id, Tenant: "alice"}
			if err := eng.Submit(ctx, dataflow.Record{ID: id, Payload: p, Meta: meta}); err != nil {
				panic(err)
			}
		}
		eng.CloseInput()
	}()
	var lines []string
	for r := range eng.Results() {
		var t txn
		_ = json.Unmarshal(r.Payload, &t)
		stages := make([]string, len(r.Hops))
		for i, h := range r.Hops {
			stages[i] = h.Stage
		}
		lines = append(lines, fmt.Sprintf("%s %q -> %q via %s", r.ID, t.Query, t.Answer, strings.Join(stages, ",")))
	}
	if err := <-served; err != nil {
		panic(err)
	}
	sort.Strings(lines) // no ordering promise across workers
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// tx-0 "what is go" -> "answer from doc-go and doc-nats" via source,embed,retrieve,generate,sink
	// tx-1 "what is nats" -> "answer from doc-yaml and doc-go" via source,embed,retrieve,generate,sink
	// tx-2 "what is rag" -> "answer from doc-go and doc-nats" via source,embed,retrieve,generate,sink
}
