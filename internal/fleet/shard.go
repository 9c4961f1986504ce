package fleet

import (
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/quantile"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// ShardRule says how a phase is split, for the records' notes.
const ShardRule = "request i of a phase goes to node i mod N (each node sends 1/N of the rate over the whole span)"

// Shard splits plan into n shards by request index: request i goes to
// shard i mod n. Each shard keeps the plan's phase, span, drain and spec,
// and gets ⌈MaxInFlight ÷ n⌉ of a bound on requests in flight; its
// requests keep their IDs, sequence numbers and offsets.
func Shard(plan workload.LoadPlan, n int) []workload.LoadPlan {
	out := make([]workload.LoadPlan, n)
	for k := range out {
		out[k] = plan
		out[k].MaxInFlight = (plan.MaxInFlight + n - 1) / n
		out[k].Requests = make([]workload.PlannedRequest, 0, len(plan.Requests)/n+1)
	}
	for i, r := range plan.Requests {
		out[i%n].Requests = append(out[i%n].Requests, r)
	}
	return out
}

// tally merges the records of one phase from its nodes: each planned ID
// once, the duplicates and strays counted, and per node what came back.
type tally struct {
	owner map[string]int // planned ID → shard
	got   map[string]bool
	nodes []nodeTally
	dups  int
	stray int
	// rejected counts, by reason, the messages dropped for failing
	// authentication or ownership (rejectedN in all).
	rejected  map[string]int
	rejectedN int
}

type nodeTally struct {
	scheduled, delivered int
	lags                 []float64
	done                 bool
	sent                 int // records the node says it published
	interrupted          bool
	err                  string
	gone                 bool // stopped answering pings before it was done
	startLate            time.Duration
}

func newTally(shards []workload.LoadPlan) *tally {
	t := &tally{owner: map[string]int{}, got: map[string]bool{}, nodes: make([]nodeTally, len(shards))}
	for k, s := range shards {
		t.nodes[k].scheduled = len(s.Requests)
		for _, r := range s.Requests {
			t.owner[r.ID] = k
		}
	}
	return t
}

// take reports whether rec is a planned record seen for the first time.
func (t *tally) take(rec *record.Request) bool {
	k, ok := t.owner[rec.ID]
	switch {
	case !ok:
		t.stray++
		return false
	case t.got[rec.ID]:
		t.dups++
		return false
	}
	t.got[rec.ID] = true
	t.nodes[k].delivered++
	t.nodes[k].lags = append(t.nodes[k].lags, rec.LagMs)
	return true
}

// finish notes node k's done message.
func (t *tally) finish(k int, d doneMsg) {
	n := &t.nodes[k]
	n.done, n.sent, n.interrupted, n.err, n.startLate = true, d.Records, d.Interrupted, d.Error, d.StartLate
}

// complete reports whether every node is done and its records are in.
func (t *tally) complete() bool {
	for _, n := range t.nodes {
		if n.gone && !n.done {
			continue
		}
		if !n.done || n.delivered < n.expected() {
			return false
		}
	}
	return true
}

// missing is how many records did not come back of those each node owes
// (nodeTally.expected). Requests a node did not send because the phase
// was interrupted are not missing (a local driver has no record of them
// either).
func (t *tally) missing() int {
	m := 0
	for _, n := range t.nodes {
		m += max(n.expected()-n.delivered, 0)
	}
	return m
}

// expected is how many records node n owes: its whole shard, unless its
// done message says it was cut short (interrupted, or its driver failed)
// — then what it says it sent, never more than its shard. A node that
// claims fewer without saying why still owes the rest.
func (n *nodeTally) expected() int {
	if n.done && (n.interrupted || n.err != "") {
		return min(max(n.sent, 0), n.scheduled)
	}
	return n.scheduled
}

// lost names the first node that stopped answering mid-phase, or "".
func (t *tally) lost(names []string) string {
	for k, n := range t.nodes {
		if n.gone && !n.done {
			return names[k]
		}
	}
	return ""
}

// interrupted reports whether a node cut its shard short or never said
// it was done.
func (t *tally) interrupted() bool {
	for _, n := range t.nodes {
		if !n.done || n.interrupted || n.err != "" {
			return true
		}
	}
	return false
}

// report is the per-node part of a phase's LoadReport.
func (t *tally) report(names []string) []workload.NodeLoad {
	out := make([]workload.NodeLoad, len(t.nodes))
	for k, n := range t.nodes {
		out[k] = workload.NodeLoad{Node: names[k], Scheduled: n.scheduled, Delivered: n.delivered, LagP99Ms: quantileOf(n.lags, 0.99)}
	}
	return out
}

// problems lists what went wrong at each node, for the notes.
func (t *tally) problems(names []string) []string {
	var out []string
	for k, n := range t.nodes {
		switch {
		case n.gone && !n.done:
			out = append(out, fmt.Sprintf("%s stopped answering mid-phase (%d/%d records back)", names[k], n.delivered, n.scheduled))
		case !n.done:
			out = append(out, fmt.Sprintf("%s never said it was done (%d/%d records back)", names[k], n.delivered, n.scheduled))
		case n.err != "":
			out = append(out, fmt.Sprintf("%s: %s", names[k], n.err))
		case n.delivered < n.sent:
			out = append(out, fmt.Sprintf("%s: %d of the %d records it sent came back", names[k], n.delivered, n.sent))
		case n.delivered < n.expected():
			out = append(out, fmt.Sprintf("%s said it sent %d of its %d requests without saying why (%d records back)", names[k], n.sent, n.scheduled, n.delivered))
		}
	}
	return out
}

// quantileOf is the q-quantile of v by the one definition
// (quantile.Definition); 0 when the node sent nothing, so it lagged
// nothing.
func quantileOf(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return quantile.Of(v, q)
}
