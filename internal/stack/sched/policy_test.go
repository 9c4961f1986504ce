package sched

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// req is a queued request in a test table: name, arrival offset and the
// scheduling attributes.
type req struct {
	name     string
	at       time.Duration
	tenant   string
	prio     Priority
	deadline time.Duration
	kind     engine.Kind
	model    string
}

// pop is one dispatch: at time offset `at`, expect the request `want`.
func run(t *testing.T, p Policy, reqs []req, popAt []time.Duration) []string {
	t.Helper()
	for i, r := range reqs {
		kind := r.kind
		if kind == "" {
			kind = engine.KindLLM
		}
		p.Push(&Item{Seq: uint64(i + 1), Kind: kind, Model: r.model, Tenant: r.tenant, Priority: r.prio,
			Arrival: t0.Add(r.at), Deadline: r.deadline, Value: r.name})
	}
	var got []string
	for _, at := range popAt {
		it := p.Pop(t0.Add(at))
		if it == nil {
			got = append(got, "<nil>")
			continue
		}
		got = append(got, it.Value.(string))
	}
	return got
}

func pops(n int, at time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = at
	}
	return out
}

func TestPolicyOrder(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name   string
		policy string
		cfg    Config
		reqs   []req
		popAt  []time.Duration
		want   []string
	}{
		{
			name: "fifo is arrival order whatever the priority", policy: FIFO,
			reqs:  []req{{name: "a", prio: PriorityLow}, {name: "b", at: ms, prio: PriorityCritical}, {name: "c", at: 2 * ms}},
			popAt: pops(4, 10*ms), want: []string{"a", "b", "c", "<nil>"},
		},
		{
			name: "priority: highest class first, fifo within a class", policy: Prio,
			reqs: []req{{name: "bg", prio: PriorityBackground}, {name: "n1", prio: PriorityNormal}, {name: "crit", prio: PriorityCritical},
				{name: "n2", prio: PriorityNormal}, {name: "high", prio: PriorityHigh}, {name: "low", prio: PriorityLow}},
			popAt: pops(6, 0), want: []string{"crit", "high", "n1", "n2", "low", "bg"},
		},
		{
			name: "slo_aware: largest elapsed/deadline first", policy: SLOAware,
			// at 100ms: a 100/1000=0.1, b 90/100=0.9, c 50/60=0.83
			reqs:  []req{{name: "a", deadline: 1000 * ms}, {name: "b", at: 10 * ms, deadline: 100 * ms}, {name: "c", at: 50 * ms, deadline: 60 * ms}},
			popAt: pops(3, 100*ms), want: []string{"b", "c", "a"},
		},
		{
			name: "slo_aware: urgencies cross over time", policy: SLOAware,
			// at 10ms: a 10/20=0.5, b 10/15=0.67 -> b; later pops see a alone.
			// c (no deadline, default 30s) ranks last.
			reqs:  []req{{name: "c"}, {name: "a", deadline: 20 * ms}, {name: "b", deadline: 15 * ms}},
			popAt: []time.Duration{10 * ms, 10 * ms, 10 * ms}, want: []string{"b", "a", "c"},
		},
		{
			name: "slo_aware: equal urgency keeps admission order", policy: SLOAware,
			reqs:  []req{{name: "x", deadline: 100 * ms}, {name: "y", deadline: 100 * ms}},
			popAt: pops(2, 50*ms), want: []string{"x", "y"},
		},
		{
			name: "fair_share: equal weights alternate tenants", policy: FairShare,
			reqs: []req{{name: "a1", tenant: "a"}, {name: "a2", tenant: "a"}, {name: "a3", tenant: "a"}, {name: "a4", tenant: "a"},
				{name: "b1", tenant: "b"}, {name: "b2", tenant: "b"}},
			popAt: pops(6, 0), want: []string{"a1", "b1", "a2", "b2", "a3", "a4"},
		},
		{
			name: "fair_share: weight 2 gets two turns per round", policy: FairShare,
			cfg: Config{Weights: map[string]int{"gold": 2}},
			reqs: []req{{name: "s1", tenant: "silver"}, {name: "s2", tenant: "silver"}, {name: "s3", tenant: "silver"},
				{name: "g1", tenant: "gold"}, {name: "g2", tenant: "gold"}, {name: "g3", tenant: "gold"}, {name: "g4", tenant: "gold"}},
			popAt: pops(7, 0), want: []string{"s1", "g1", "g2", "s2", "g3", "g4", "s3"},
		},
		{
			name: "fair_share: a noisy tenant cannot starve a quiet one", policy: FairShare,
			reqs: []req{{name: "n1", tenant: "noisy"}, {name: "n2", tenant: "noisy"}, {name: "n3", tenant: "noisy"},
				{name: "n4", tenant: "noisy"}, {name: "q1", tenant: "quiet", at: 5 * time.Millisecond}},
			popAt: pops(3, 10*ms), want: []string{"n1", "q1", "n2"},
		},
		{
			name: "hybrid: embeddings first, LLM by the priority fallback", policy: Hybrid,
			reqs: []req{{name: "llm-low", prio: PriorityLow}, {name: "emb", kind: engine.KindEmbedding, model: "e"},
				{name: "llm-high", prio: PriorityHigh}},
			popAt: pops(3, 0), want: []string{"emb", "llm-high", "llm-low"},
		},
		{
			name: "hybrid with fifo fallback", policy: Hybrid, cfg: Config{Fallback: FIFO},
			reqs:  []req{{name: "llm-low", prio: PriorityLow}, {name: "llm-high", prio: PriorityHigh}},
			popAt: pops(2, 0), want: []string{"llm-low", "llm-high"},
		},
		{
			name: "adaptive: mixed priorities switch it to priority", policy: Adaptive,
			reqs:  []req{{name: "low", prio: PriorityLow}, {name: "crit", prio: PriorityCritical}, {name: "norm", prio: PriorityNormal}},
			popAt: pops(3, 0), want: []string{"crit", "norm", "low"},
		},
		{
			name: "adaptive: deadlines switch it to slo_aware", policy: Adaptive,
			reqs:  []req{{name: "loose", deadline: time.Second}, {name: "tight", deadline: 20 * ms}},
			popAt: pops(2, 10*ms), want: []string{"tight", "loose"},
		},
		{
			name: "adaptive: one tenant holding most of the queue switches it to fair_share", policy: Adaptive,
			reqs: []req{{name: "a1", tenant: "a"}, {name: "a2", tenant: "a"}, {name: "a3", tenant: "a"},
				{name: "b1", tenant: "b"}},
			popAt: pops(4, 0), want: []string{"a1", "b1", "a2", "a3"},
		},
		{
			name: "adaptive: uniform traffic stays fifo", policy: Adaptive,
			reqs:  []req{{name: "x", tenant: "a"}, {name: "y", tenant: "b"}, {name: "z", tenant: "c"}},
			popAt: pops(3, 0), want: []string{"x", "y", "z"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.policy, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := run(t, p, tc.reqs, tc.popAt)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("dispatch order = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAdaptiveHoldsChoiceForSwitchEvery(t *testing.T) {
	p, _ := New(Adaptive, Config{SwitchEvery: time.Second})
	a := p.(*adaptive)
	push := func(seq uint64, name string, prio Priority) {
		p.Push(&Item{Seq: seq, Priority: prio, Arrival: t0, Value: name})
	}
	push(1, "low", PriorityLow)
	push(2, "crit", PriorityCritical)
	if got := p.Pop(t0).Value; got != "crit" || a.Current() != Prio {
		t.Fatalf("first pop %v under %s, want crit under priority", got, a.Current())
	}
	// Now uniform traffic: the rule says fifo, but only after SwitchEvery.
	push(3, "n1", PriorityLow)
	push(4, "n2", PriorityLow)
	p.Pop(t0.Add(500 * time.Millisecond))
	if a.Current() != Prio {
		t.Fatalf("switched after 500ms to %s; want to hold priority for 1s", a.Current())
	}
	p.Pop(t0.Add(1500 * time.Millisecond))
	if a.Current() != FIFO {
		t.Fatalf("after 1.5s current = %s, want fifo", a.Current())
	}
}

func TestHybridPopBatchGroupsByModel(t *testing.T) {
	p, _ := New(Hybrid, Config{})
	b := p.(Batcher)
	models := []string{"m1", "m2", "m1", "m1", "m2"}
	for i, m := range models {
		p.Push(&Item{Seq: uint64(i + 1), Kind: engine.KindEmbedding, Model: m, Value: i})
	}
	p.Push(&Item{Seq: 9, Kind: engine.KindLLM, Value: 9})
	var got [][]int
	for items := b.PopBatch(t0, 2); items != nil; items = b.PopBatch(t0, 2) {
		var ids []int
		for _, it := range items {
			ids = append(ids, it.Value.(int))
		}
		got = append(got, ids)
	}
	want := [][]int{{0, 2}, {1, 4}, {3}, {9}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("batches = %v, want %v", got, want)
	}
}

func TestTransferKeepsAdmissionOrder(t *testing.T) {
	src, _ := New(Prio, Config{})
	prios := []Priority{PriorityLow, PriorityCritical, PriorityNormal, PriorityHigh}
	for i, pr := range prios {
		src.Push(&Item{Seq: uint64(i + 1), Priority: pr, Value: i})
	}
	dst, _ := New(FIFO, Config{})
	Transfer(dst, src, t0)
	if src.Len() != 0 || dst.Len() != 4 {
		t.Fatalf("after transfer src=%d dst=%d, want 0 and 4", src.Len(), dst.Len())
	}
	for i := range prios {
		if got := dst.Pop(t0).Value.(int); got != i {
			t.Fatalf("pop %d = %d; fifo after a switch must be admission order", i, got)
		}
	}
}

func TestNewUnknownPolicy(t *testing.T) {
	for _, name := range []string{"", "FIFO", "round_robin"} {
		if _, err := New(name, Config{}); err == nil || !strings.Contains(err.Error(), "unknown policy") {
			t.Errorf("New(%q) error = %v, want unknown policy", name, err)
		}
	}
	if _, err := New(Hybrid, Config{Fallback: Adaptive}); err == nil {
		t.Error("hybrid with adaptive fallback accepted")
	}
}

func TestParsePriority(t *testing.T) {
	for _, name := range []string{"critical", "high", "normal", "low", "background"} {
		p, err := ParsePriority(name)
		if err != nil || p.String() != name {
			t.Errorf("ParsePriority(%q) = %v, %v", name, p, err)
		}
	}
	if p, err := ParsePriority(""); err != nil || p != PriorityNormal {
		t.Errorf(`ParsePriority("") = %v, %v; want normal`, p, err)
	}
	if _, err := ParsePriority("urgent"); err == nil {
		t.Error("ParsePriority(urgent) accepted")
	}
}

func TestQuotas(t *testing.T) {
	q := NewQuotas(Quota{}, map[string]Quota{
		"conc": {MaxConcurrent: 2},
		"rate": {Rate: 2, Burst: 2},
	})
	var qe *QuotaError
	// Concurrency: two admitted, the third refused until one releases.
	r1, err1 := q.Admit("conc", t0)
	_, err2 := q.Admit("conc", t0)
	if _, err := q.Admit("conc", t0); err1 != nil || err2 != nil || !errors.As(err, &qe) || qe.Reason != "concurrency" {
		t.Fatalf("concurrency: errs %v %v, third %v", err1, err2, err)
	}
	r1()
	r1() // release is idempotent
	if _, err := q.Admit("conc", t0); err != nil {
		t.Fatalf("after release: %v", err)
	}
	if _, err := q.Admit("conc", t0); err == nil {
		t.Fatal("double release freed two slots")
	}
	// Rate: burst 2 at t0, then 2/s refills one token per 500ms.
	for i := 0; i < 2; i++ {
		rel, err := q.Admit("rate", t0)
		if err != nil {
			t.Fatalf("burst %d: %v", i, err)
		}
		rel()
	}
	_, err := q.Admit("rate", t0.Add(100*time.Millisecond))
	if !errors.As(err, &qe) || qe.Reason != "rate" || qe.RetryAfter != 400*time.Millisecond {
		t.Fatalf("over rate: %v (retry after %v), want rate refusal with 400ms", err, qe.RetryAfter)
	}
	if _, err := q.Admit("rate", t0.Add(600*time.Millisecond)); err != nil {
		t.Fatalf("after refill: %v", err)
	}
	// Unlimited tenants are never refused.
	for i := 0; i < 100; i++ {
		if _, err := q.Admit("anyone", t0); err != nil {
			t.Fatal(err)
		}
	}
}

func TestQuotaValidate(t *testing.T) {
	bad := []Quota{{Weight: -1}, {MaxConcurrent: -1}, {Rate: -1}, {Burst: -2}}
	for _, q := range bad {
		if q.Validate() == nil {
			t.Errorf("%+v accepted", q)
		}
	}
	if err := (Quota{Weight: 2, MaxConcurrent: 4, Rate: 1.5, Burst: 3}).Validate(); err != nil {
		t.Error(err)
	}
}

// TestRepushKeepsAdmissionOrder: an item pushed again after a pop (the
// gateway retries a request whose engine failed before its first token)
// goes back to its admission place, not behind later arrivals.
func TestRepushKeepsAdmissionOrder(t *testing.T) {
	for _, name := range []string{FIFO, Prio, FairShare, Hybrid} {
		t.Run(name, func(t *testing.T) {
			p, _ := New(name, Config{})
			items := make([]*Item, 4)
			for i := range items {
				items[i] = &Item{Seq: uint64(i + 1), Kind: engine.KindLLM, Priority: PriorityNormal, Arrival: t0, Value: i}
				p.Push(items[i])
			}
			first := p.Pop(t0)
			p.Push(first) // retried
			var got []int
			for it := p.Pop(t0); it != nil; it = p.Pop(t0) {
				got = append(got, it.Value.(int))
			}
			if want := []int{0, 1, 2, 3}; !reflect.DeepEqual(got, want) {
				t.Errorf("order after a re-push %v, want %v", got, want)
			}
		})
	}
}

// TestQuotaStateIsBounded: tenant ids come from a request header, so a
// rate quota must not remember every id it ever saw: a tenant with nothing
// running and a full bucket is forgotten (it is as good as new).
func TestQuotaStateIsBounded(t *testing.T) {
	q := NewQuotas(Quota{Rate: 10, Burst: 2}, nil)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 10 * time.Millisecond) }
	for i := 0; i < 5000; i++ { // a new id every 10 ms; each bucket refills in 100 ms
		rel, err := q.Admit(fmt.Sprintf("tenant-%d", i), at(i))
		if err != nil {
			t.Fatal(err)
		}
		rel()
	}
	rel, err := q.Admit("late", at(5000))
	if err != nil {
		t.Fatal(err)
	}
	defer rel()
	q.mu.Lock()
	n := len(q.state)
	q.mu.Unlock()
	if n > 2048 {
		t.Errorf("quota state holds %d tenants after 5000 one-off ids; want it bounded", n)
	}
	// A tenant still limited is remembered.
	for i := 0; i < 2; i++ {
		r, err := q.Admit("busy", at(5000))
		if err != nil {
			t.Fatal(err)
		}
		r()
	}
	if _, err := q.Admit("busy", at(5000)); err == nil {
		t.Error("burst exceeded after pruning")
	}
}
