package fleet

import (
	"fmt"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

func planOf(n int) workload.LoadPlan {
	p := workload.LoadPlan{Phase: "p", Span: time.Second, Spec: []byte(`{}`), MaxInFlight: 5}
	for i := range n {
		p.Requests = append(p.Requests, workload.PlannedRequest{ID: fmt.Sprintf("p-%05d", i), Seq: i, Offset: time.Duration(i) * time.Millisecond})
	}
	return p
}

// TestShard: every request lands in exactly one shard, request i in
// shard i mod n, in time order, with the plan's shared fields.
func TestShard(t *testing.T) {
	for _, tc := range []struct {
		name        string
		requests, n int
	}{
		{"even", 10, 2},
		{"uneven", 11, 4},
		{"fewer requests than nodes", 2, 4},
		{"one node", 7, 1},
		{"empty phase", 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := planOf(tc.requests)
			shards := Shard(plan, tc.n)
			if len(shards) != tc.n {
				t.Fatalf("%d shards, want %d", len(shards), tc.n)
			}
			seen := map[string]int{}
			for k, s := range shards {
				if s.Phase != plan.Phase || s.Span != plan.Span || string(s.Spec) != "{}" || s.MaxInFlight != (5+tc.n-1)/tc.n {
					t.Errorf("shard %d lost the plan's shared fields: %+v", k, s)
				}
				for j, r := range s.Requests {
					seen[r.ID]++
					if r.Seq%tc.n != k {
						t.Errorf("request %d in shard %d, want %d", r.Seq, k, r.Seq%tc.n)
					}
					if j > 0 && r.Offset < s.Requests[j-1].Offset {
						t.Errorf("shard %d out of time order at %d", k, j)
					}
				}
			}
			for _, r := range plan.Requests {
				if seen[r.ID] != 1 {
					t.Errorf("request %s in %d shards, want 1", r.ID, seen[r.ID])
				}
			}
			if len(seen) != tc.requests {
				t.Errorf("%d distinct requests in the shards, want %d", len(seen), tc.requests)
			}
		})
	}
}

// TestTally: the merge keeps each planned record once, counts a
// republished one as a duplicate and an unknown one as a stray, and
// counts what never came back as missing.
func TestTally(t *testing.T) {
	shards := Shard(planOf(6), 2) // node 0: 0 2 4; node 1: 1 3 5
	tl := newTally(shards)
	var kept []string
	for _, id := range []string{"p-00000", "p-00001", "p-00002", "p-00000", "x-00009", "p-00003"} {
		rec := record.Request{ID: id, LagMs: 1}
		if tl.take(&rec) {
			kept = append(kept, id)
		}
	}
	if fmt.Sprint(kept) != "[p-00000 p-00001 p-00002 p-00003]" || tl.dups != 1 || tl.stray != 1 {
		t.Fatalf("kept %v, %d duplicates, %d strays; want 4 kept, 1 and 1", kept, tl.dups, tl.stray)
	}
	if tl.complete() {
		t.Fatal("complete before any node said it was done")
	}
	tl.finish(0, doneMsg{Node: "a", Records: 2, Interrupted: true}) // node 0 sent 0 and 2 only
	if tl.complete() {
		t.Fatal("complete while node 1 has not said it was done")
	}
	tl.finish(1, doneMsg{Node: "b", Records: 3})
	if tl.complete() {
		t.Fatal("complete while node 1's record 5 is still on its way")
	}
	rec := record.Request{ID: "p-00005"}
	tl.take(&rec)
	if !tl.complete() {
		t.Fatal("not complete with every node done and its records in")
	}
	if tl.missing() != 0 || !tl.interrupted() {
		t.Errorf("missing %d, interrupted %v; want 0 (p-00004 was never sent) and true", tl.missing(), tl.interrupted())
	}
	got := tl.report([]string{"a", "b"})
	if got[0].Scheduled != 3 || got[0].Delivered != 2 || got[1].Delivered != 3 || got[0].LagP99Ms != 1 {
		t.Errorf("per-node report %+v", got)
	}
	if p := tl.problems([]string{"a", "b"}); len(p) != 0 {
		t.Errorf("problems %q, want none (a was interrupted, and sent 2)", p)
	}
	// A node that says it sent 3 but 2 came back, and one that never said
	// it was done: both count as missing, and are named.
	tl = newTally(Shard(planOf(6), 2))
	for _, id := range []string{"p-00000", "p-00002", "p-00001"} {
		rec := record.Request{ID: id}
		tl.take(&rec)
	}
	tl.finish(0, doneMsg{Node: "a", Records: 3})
	if tl.missing() != 1+2 || tl.complete() {
		t.Errorf("missing %d, complete %v; want 3 and false", tl.missing(), tl.complete())
	}
	if p := tl.problems([]string{"a", "b"}); len(p) != 2 || p[0] != "a: 2 of the 3 records it sent came back" || p[1] != "b never said it was done (1/3 records back)" {
		t.Errorf("problems %q", p)
	}
	// A node that says it is done having sent fewer than its shard, and
	// neither interrupted nor failed, still owes the rest (the fuzzer's
	// find: a bare {"node":"a"} done message emptied its share).
	tl = newTally(Shard(planOf(6), 2))
	tl.finish(0, doneMsg{Node: "a"})
	tl.finish(1, doneMsg{Node: "b", Records: 1, Interrupted: true})
	if tl.missing() != 3+1 || tl.complete() {
		t.Errorf("missing %d, complete %v; want 4 (a's 3, b's 1 sent) and false", tl.missing(), tl.complete())
	}
	if p := tl.problems([]string{"a", "b"}); len(p) != 2 || p[0] != "a said it sent 0 of its 3 requests without saying why (0 records back)" {
		t.Errorf("problems %q", p)
	}
}
