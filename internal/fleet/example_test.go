package fleet_test

import (
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/fleet"
	"github.com/sagebench/sagebench/internal/workload"
)

// A phase of five requests over two nodes: request i goes to node i mod 2,
// keeping its ID and its intended offset on the phase's one schedule.
func ExampleShard() {
	plan := workload.LoadPlan{Phase: "p", MaxInFlight: 3}
	for i := range 5 {
		plan.Requests = append(plan.Requests, workload.PlannedRequest{ID: fmt.Sprintf("p-%05d", i), Seq: i, Offset: time.Duration(i) * 100 * time.Millisecond})
	}
	for k, s := range fleet.Shard(plan, 2) {
		fmt.Printf("node %d (max in flight %d):", k, s.MaxInFlight)
		for _, r := range s.Requests {
			fmt.Printf(" %s@%v", r.ID, r.Offset)
		}
		fmt.Println()
	}
	// Output:
	// node 0 (max in flight 2): p-00000@0s p-00002@200ms p-00004@400ms
	// node 1 (max in flight 2): p-00001@100ms p-00003@300ms
}
