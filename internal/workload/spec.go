package workload

import (
	"strings"

	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// Spec is a catalog entry: a workload family and, when this build has it,
// how to make one.
type Spec struct {
	ID          string // Q1..Q8
	Name        string // e.g. ControlMix
	Entry       string // entry name of the original benchmark, e.g. control_plane
	Description string
	// PhaseLabel names what a phase is (e.g. "policy"); it becomes the key
	// of the phase element in bench.txt names. Empty: phases are not named.
	PhaseLabel string
	// New returns a workload with the defaults of its full or quick scale;
	// nil when this build does not implement the Q yet.
	New func(quick bool) Workload
	// Distributed says the Q's client side runs on the dataflow runtime,
	// so --nodes N spreads it over N workers; other Qs run on one node.
	Distributed bool
	// ShardedLoad says the Q's load goes through traffic.Phase only, so
	// --nodes N sends it from N workers (internal/fleet), the schedule
	// sharded by request index.
	ShardedLoad bool
	// Primary defines the Q's primary metric (what its Result.Primary
	// is): the runner uses it when a run ends without the Q's answer, and
	// the leaderboard to name each Q's column.
	Primary result.Def
}

// Implemented reports whether this build can run the Q.
func (s Spec) Implemented() bool { return s.New != nil }

// Section is the key of the Q's section in a config file, e.g. "q2".
func (s Spec) Section() string { return strings.ToLower(s.ID) }

// BenchName is the Go benchmark name stem, e.g. Q2ControlMix.
func (s Spec) BenchName() string { return s.ID + s.Name }

// TargetDefs are the metrics a Q's targets (qN.target) may name: the
// Q's own and the run-level metrics every result carries.
func TargetDefs(own ...result.Def) []result.Def {
	return append(own, summary.DefGoodput, summary.DefThroughput, summary.DefSLOAttainment, summary.DefSuccessRate,
		summary.DefE2EP50, summary.DefE2EP95, summary.DefE2EP99, summary.DefLagP99)
}
