package run

import (
	"context"
	"fmt"

	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/target"
)

// warm opens the connections the busiest phase of r is expected to need
// at once (openai.WarmConns) before traffic, and returns how many it
// opened.
func warm(ctx context.Context, t *target.Target, r runconfig.Resolved, seed int64) int {
	plan, err := r.Workload.Plan(seed)
	if err != nil {
		return 0
	}
	rate := 0.0
	for _, p := range plan.Phases {
		rate = max(rate, p.Rate)
	}
	return t.Client().Warm(ctx, openai.WarmConns(rate))
}

// connNotes says how the run used its connections, and whether the cap
// on them was what held requests back. With a fleet, the nodes sent the
// load with connections of their own.
func connNotes(t *target.Target, warmed int, fleet bool) []string {
	st := t.Client().ConnStats()
	whose := ""
	if fleet {
		whose = " of this process (the load nodes sent the workload's requests on their own)"
	}
	notes := []string{fmt.Sprintf("connections%s: %d dialed (%d warmed before traffic), at most %d requests in flight",
		whose, st.Dials, warmed, st.PeakInFlight)}
	if st.PeakInFlight >= int64(st.MaxConns) {
		notes = append(notes, fmt.Sprintf("the connection cap (target.max_conns %d) was reached: requests waited for a connection, and their schedule lag shows it; raise target.max_conns", st.MaxConns))
	}
	return notes
}
