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
	// Figure is how the report and the paper draw the Q's answer.
	Figure Figure
	// Files are the record files the Q writes into its run directory
	// besides those of every run (RunFiles), e.g. a drill's events.jsonl.
	Files []string
}

// RunFiles are the files every run directory holds; metrics.jsonl only
// when the target serves Prometheus metrics.
var RunFiles = []string{"run.json", "requests.jsonl", "summary.md", "bench.txt", "metrics.jsonl"}

// Figure names one of the answer figures internal/answer draws and the
// key of the result table it reads (result.Table.Key, a constant of the
// Q): a Q registers its figure here, so the figures keep no list of Qs.
type Figure struct {
	Recipe string // one of the Figure* recipes; "": the Q has no answer figure
	Table  string // the key of the table the recipe reads; "" for a timeline
}

// The answer figures' recipes.
const (
	// FigureStages: time per pipeline stage (p50, p99) beside retrieval
	// quality; reads a table with stage_<name>_p50_ms/_p99_ms cells and
	// the recall_at_k and source_doc_retrieved metrics.
	FigureStages = "stages"
	// FigurePolicies: critical p99 TTFT and SLO attainment per policy;
	// reads critical_ttft_p99_ms and critical_slo_attainment cells and
	// the critical_ttft_slo_ms metric.
	FigurePolicies = "policies"
	// FigureIsolation: the victim's p99 TTFT alone and contended per
	// policy; reads victim_ttft_p99_alone_ms, victim_ttft_p99_contended_ms
	// and interference_ratio cells and the victim_ttft_slo_ms metric.
	FigureIsolation = "isolation"
	// FigureFrontier: the max rate meeting the SLO per pool size; reads
	// max_rate cells by engines.
	FigureFrontier = "frontier"
	// FigureBursts: SLO attainment in bursts and base per priority and
	// policy; reads policy, window and priority text columns and the
	// SLO attainment cells.
	FigureBursts = "bursts"
	// FigureTimeline: a drill's windowed p99 and throughput with its
	// events; reads windows.jsonl, the events and the
	// recovery_bound_<metric>_ms metric.
	FigureTimeline = "timeline"
)

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
