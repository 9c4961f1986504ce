package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// BenchmarkRecordReturn measures the record return path alone: records
// of a phase published by a node (async, Nats-Msg-Id = ID, 4 sending
// goroutines, then the done message) through the embedded JetStream
// server to the coordinator, which reads, decodes, deduplicates and
// emits each while they are published. One op is one phase of 10,000 records (realistic ones, a
// streamed chat's record with 32 token times, ~1.2 kB of JSON); the
// records/s metric is the end-to-end rate.
func BenchmarkRecordReturn(b *testing.B) {
	const n = 10_000
	ctx := context.Background()
	ncs := embeddedConns(b, ctx, 2)
	cnc, nnc := ncs[0], ncs[1] // the coordinator's and the node's own connection
	c, err := New(ctx, Config{NC: cnc, Run: "bench", Nodes: []Node{{Name: "w", Subject: "x"}}, Tail: time.Minute, Key: testKey})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	njs, err := natsjs.New(nnc, natsjs.WithPublishAsyncMaxPending(8192))
	if err != nil {
		b.Fatal(err)
	}
	plans := make([]workload.LoadPlan, b.N) // IDs unique in the run, as the stream deduplicates them
	for it := range plans {
		plans[it] = workload.LoadPlan{Phase: "p" + strconv.Itoa(it), Span: time.Second}
		for i := range n {
			plans[it].Requests = append(plans[it].Requests, workload.PlannedRequest{ID: fmt.Sprintf("p%d-%05d", it, i), Seq: i})
		}
	}
	b.ResetTimer()
	start := time.Now()
	for it := range b.N {
		returnPhase(b, c, njs, plans[it], strconv.Itoa(it))
	}
	b.ReportMetric(float64(b.N*n)/time.Since(start).Seconds(), "records/s")
}

func returnPhase(b *testing.B, c *Coordinator, njs natsjs.JetStream, plan workload.LoadPlan, key string) {
	subject := c.prefix + key
	t := newTally(Shard(plan, 1))
	msgs, stop, err := c.consume(context.Background(), subject)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	emitted := 0
	collected := make(chan struct{})
	go func() { // the coordinator reads while the node publishes
		c.collect(context.Background(), key, plan, time.Now(), t, msgs, func(record.Request) { emitted++ })
		close(collected)
	}()
	pub := &publisher{js: njs, subject: subject, node: "w", key: testKey}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(plan.Requests); i += 4 {
				r := plan.Requests[i]
				pub.add(benchRecord(r.ID, r.Seq))
			}
		})
	}
	wg.Wait()
	count, err := pub.flush(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	d, _ := json.Marshal(doneMsg{Node: "w", Records: count})
	m := nats.NewMsg(subject)
	m.Header.Set(hdrKind, kindDone)
	m.Data = d
	seal(testKey, "w", m)
	if err := publishSync(context.Background(), njs, m); err != nil {
		b.Fatal(err)
	}
	<-collected
	if emitted != len(plan.Requests) {
		b.Fatalf("%d of %d records back", emitted, len(plan.Requests))
	}
	c.purge(subject)
}

func benchRecord(id string, seq int) record.Request {
	r := record.Request{ID: id, Seq: seq, Kind: "request", Type: "llm", Phase: "p", Tenant: "tenant-a", Priority: "normal",
		Model: "meta-llama/Llama-3.1-8B-Instruct", IntendedNS: 1e9, SentNS: 1e9 + 3e5, FirstByte: 1.01e9, FirstToken: 1.01e9,
		EndNS: 1.2e9, E2EMs: 200, ServiceMs: 199.7, LagMs: 0.3, TTFTMs: 10, TPOTMs: 6, Status: 200, OK: true, PromptTok: 64, OutputTok: 32}
	for k := range 32 {
		r.TokenNS = append(r.TokenNS, int64(1.01e9)+int64(k)*6e6)
	}
	return r
}
