package fleet

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// ClassNodeLost is the error class of a request whose record never came
// back because its load node stopped answering mid-phase: it may or may
// not have been sent, so it counts as failed.
const ClassNodeLost = "node_lost"

// emitLost hands emit a failed record (ClassNodeLost, the node named) for
// every request of a node that was lost mid-phase whose record never came
// back, in sequence order, and returns how many.
func (c *Coordinator) emitLost(plan workload.LoadPlan, start time.Time, t *tally, emit func(record.Request)) int {
	names := c.names()
	var lost []workload.PlannedRequest
	for _, r := range plan.Requests {
		k := t.owner[r.ID]
		if n := t.nodes[k]; n.gone && !n.done && !t.got[r.ID] {
			lost = append(lost, r)
		}
	}
	sort.Slice(lost, func(i, j int) bool { return lost[i].Seq < lost[j].Seq })
	for _, r := range lost {
		node := names[t.owner[r.ID]]
		var it traffic.Item
		_ = json.Unmarshal(r.Item, &it) // a planned item: its type, tenant and priority label the record
		rec := record.Request{ID: r.ID, Seq: r.Seq, Kind: "request", Phase: plan.Phase, Type: it.Type, Tenant: it.Tenant,
			Priority: it.Priority, Node: node, IntendedNS: max(int64(start.Add(r.Offset).Sub(plan.Base)), 1),
			ErrorClass: ClassNodeLost, Error: fmt.Sprintf("load node %s stopped answering mid-phase; the request's record never came back (it may or may not have been sent)", node)}
		emit(rec)
	}
	return len(lost)
}
