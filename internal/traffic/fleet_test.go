package traffic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/target/targettest"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestPlanAndSendShard: Plan materialises every request of a phase (ID,
// seq, offset, deadline, item) so that SendShard, on a node, sends each
// at start + its offset with the same shapes and identity, and the
// records' intended times sit on that one schedule.
func TestPlanAndSendShard(t *testing.T) {
	ms := time.Millisecond
	ph := traffic.Phase{Name: "ph", MaxInFlight: 3,
		Schedule: load.Schedule{Offsets: []time.Duration{0, 10 * ms, 25 * ms}, Length: 30 * ms},
		Items: []traffic.Item{{Type: protocol.TypeLLM, Tenant: "a", Priority: protocol.PriorityHigh, Text: 1 << 63},
			{Type: protocol.TypeEmbedding, Tenant: "b", Text: 2}, {Type: protocol.TypeLLM, Tenant: "c", Text: 3}},
		Shapes: traffic.Shapes{LLM: traffic.LLMShape{Model: "m", MaxTokens: 2, PromptWords: 3},
			Embedding: traffic.EmbedShape{Model: "e", Inputs: 1, Words: 2}},
		Deadline: func(it traffic.Item) time.Duration { return time.Duration(len(it.Tenant)) * time.Second }}
	base := time.Now()
	plan, err := ph.Plan(&workload.Env{Start: base, Drain: time.Second}, 7)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Phase != "ph" || plan.Span != 30*ms || plan.MaxInFlight != 3 || plan.Drain != time.Second || !plan.Base.Equal(base) || len(plan.Requests) != 3 {
		t.Fatalf("plan %+v", plan)
	}
	for i, r := range plan.Requests {
		var it traffic.Item
		if err := json.Unmarshal(r.Item, &it); err != nil || !reflect.DeepEqual(it, ph.Items[i]) {
			t.Errorf("request %d: item %+v (%v), want %+v", i, it, err, ph.Items[i])
		}
		if r.ID != fmt.Sprintf("ph-%05d", 7+i) || r.Seq != 7+i || r.Offset != ph.Schedule.Offsets[i] || r.Deadline != time.Second {
			t.Errorf("request %d: %+v", i, r)
		}
	}
	fake := targettest.NewServer(targettest.OK)
	defer fake.Close()
	tgt, err := target.Open(context.Background(), target.Config{URL: fake.URL}, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close(context.Background())
	var mu sync.Mutex
	got := map[string]record.Request{}
	env := &workload.Env{Target: tgt, Start: base, Log: io.Discard, Sent: func() {},
		Record: func(r record.Request) { mu.Lock(); got[r.ID] = r; mu.Unlock() }}
	start := time.Now().Add(5 * ms)
	load.PreciseClock{}.SleepUntil(context.Background(), start)
	rep, err := traffic.SendShard(context.Background(), env, plan, start)
	if err != nil || rep.Dispatched != 3 || rep.Interrupted {
		t.Fatalf("report %+v, %v", rep, err)
	}
	for i, r := range plan.Requests {
		rec := got[r.ID]
		if want := start.Add(r.Offset).Sub(base); time.Duration(rec.IntendedNS) != want {
			t.Errorf("%s intended at %v, want %v", r.ID, time.Duration(rec.IntendedNS), want)
		}
		if !rec.OK || rec.Seq != r.Seq || rec.Phase != "ph" || rec.Tenant != ph.Items[i].Tenant || rec.Type != ph.Items[i].Type || rec.SLOMet {
			t.Errorf("record %+v (SLOMet is the coordinator's to judge)", rec)
		}
	}
	if fake.Count("chat") != 2 || fake.Count("embeddings") != 1 {
		t.Errorf("the target saw %d chats and %d embeddings, want 2 and 1", fake.Count("chat"), fake.Count("embeddings"))
	}
}
