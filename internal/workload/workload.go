package workload

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Workload is one Q, configured. The runner calls Config to decode YAML
// and flags into it, Plan for --dry-run and the records, and Run once per
// repetition. Implementations keep no state between Run calls other than
// their configuration.
type Workload interface {
	// Config returns the workload's configuration: a pointer to a struct
	// with yaml/json tags, already holding the defaults of its scale. YAML
	// (section qN) is decoded into it and flag overrides applied to it.
	Config() Config
	// Plan describes what Run will send with this seed, without sending.
	Plan(seed int64) (Plan, error)
	// Run sends the workload's traffic to env.Target, hands every finished
	// request to env.Record, and returns the phases it ran. When ctx is
	// cancelled it stops sending, lets in-flight requests drain for a
	// bounded time and returns the phases so far marked Interrupted.
	Run(ctx context.Context, env *Env) (Outcome, error)
}

// StackDefaults is implemented by a workload that needs a particular
// reference stack when the target is embedded (a heterogeneous pool for
// Q5, say). StackYAML returns `sagebench serve` stack YAML for the
// workload's configuration; target.stack_config, when set, wins.
type StackDefaults interface {
	StackYAML() []byte
}

// Config is a workload's configuration.
type Config interface {
	// Validate reports the first problem, naming the key (qN.key) and the fix.
	Validate() error
	// Override applies the workload flags the user set and returns the
	// names of those that do not apply to this workload.
	Override(o Overrides) (ignored []string)
}

// ModelLister is implemented by a Config whose traffic names models:
// Models lists those it will ask the target for, so that the target's
// model list can be checked before any traffic (target.Options.Models).
type ModelLister interface {
	Models() []string
}

// Models returns the models w's configuration asks for (nil when it
// does not say).
func Models(w Workload) []string {
	if ml, ok := w.Config().(ModelLister); ok {
		return ml.Models()
	}
	return nil
}

// ChatModelLister is implemented by a Config whose traffic asks for
// embedding models besides chat models: ChatModels lists the chat models
// alone, those a chat prompt's token count concerns (the /tokenize
// preflight).
type ChatModelLister interface {
	ChatModels() []string
}

// ChatModels returns the chat models w's configuration asks for: its
// ChatModels, or all its Models when it does not tell them apart.
func ChatModels(w Workload) []string {
	if cl, ok := w.Config().(ChatModelLister); ok {
		return cl.ChatModels()
	}
	return Models(w)
}

// Overrides are the workload flags of `sagebench run`; nil means not set.
type Overrides struct {
	Rate          *float64       // --rate: arrival rate, req/s
	TotalRequests *int           // --total-requests
	Duration      *time.Duration // --duration
	LLMRatio      *float64       // --llm-ratio
}

// Unused returns those of the named flags ("rate", "total-requests",
// "duration", "llm-ratio") that o sets, in the order named: what an
// Override that does not apply them reports as ignored.
func (o Overrides) Unused(names ...string) []string {
	set := map[string]bool{"rate": o.Rate != nil, "total-requests": o.TotalRequests != nil,
		"duration": o.Duration != nil, "llm-ratio": o.LLMRatio != nil}
	var out []string
	for _, n := range names {
		if set[n] {
			out = append(out, n)
		}
	}
	return out
}

// ApplySchedule applies --rate, --total-requests and --duration to sc.
// --duration without --total-requests lets the duration end the schedule.
func (o Overrides) ApplySchedule(sc *load.ScheduleConfig) {
	if o.Rate != nil {
		sc.Rate = *o.Rate
	}
	if o.TotalRequests != nil {
		sc.Count = *o.TotalRequests
	}
	if o.Duration != nil {
		sc.Duration = *o.Duration
		if o.TotalRequests == nil {
			sc.Count = 0
		}
	}
}

// Plan is what a workload will do in one repetition.
type Plan struct {
	Phases []PlannedPhase `json:"phases"`
	Notes  []string       `json:"notes,omitempty"`
}

// PlannedPhase is one sub-run of a plan with its schedule summary.
type PlannedPhase struct {
	Name     string        `json:"name"`
	Process  string        `json:"process"`
	Requests int           `json:"requests"`
	Rate     float64       `json:"rate"` // req/s of the schedule
	Span     time.Duration `json:"span"`
	Mix      string        `json:"mix,omitempty"` // e.g. "llm 71, embedding 29"
	// Tokens are the drawn input and output lengths of the phase's chat
	// requests per class (a priority, a tenant), in tokens.
	Tokens []TokenDist `json:"tokens,omitempty"`
	// Policy is the scheduling policy the phase runs under, switched on
	// the target (POST /admin/policy); "" when the phase switches none.
	// A target that cannot switch runs only the first policy's phases,
	// with its own policy.
	Policy string `json:"policy,omitempty"`
	// Engines is the pool size the phase resizes the target to (engines
	// admin API); 0 when it resizes nothing. A target that cannot be
	// resized is measured at its current size only.
	Engines int `json:"engines,omitempty"`
}

// TokenDist is the distribution of one class's drawn lengths.
type TokenDist struct {
	Class         string `json:"class"`
	Input, Output shape.Summary
}

// StackOnly is implemented by a Config with keys that configure the
// embedded reference stack only: a URL target ignores them, and a run
// that sets one against a URL target says so.
type StackOnly interface {
	// StackOnlyKeys are the keys' dotted paths, e.g. "q3.stack".
	StackOnlyKeys() []string
}

// Env is what a workload gets for one repetition.
type Env struct {
	Target      *target.Target
	Seed        int64 // this repetition's seed (base seed + repetition)
	Repetition  int
	Parallelism int
	Start       time.Time // Run.StartedAt: request offsets count from here
	// Record takes a finished request; safe for concurrent use. The
	// runner writes it to requests.jsonl and feeds the summary. Calls
	// after Run returned are dropped.
	Record func(record.Request)
	// Sent counts a request as sent, for the progress line; safe for
	// concurrent use.
	Sent func()
	// Drain bounds how long in-flight requests may finish after ctx is
	// cancelled.
	Drain time.Duration
	// FineGap is the run's pacer as load.Driver.FineGap: every driver of
	// the workload takes it (0: the default pacer).
	FineGap time.Duration
	// Log receives debug lines (io.Discard unless --verbose).
	Log io.Writer
	// RunID is the run's id (run.json run_id) when the runner sets it; a
	// workload that submits work elsewhere names it after the run.
	RunID string
	// Dataflow, when set, runs a Q's dataflow graph on another engine —
	// the NATS JetStream cluster of --nodes N — instead of the in-process
	// one; the graph's operators then run on the workers. Nil: in-process.
	Dataflow DataflowStarter
	// Load, when set, sends the open-loop phases of traffic.Phase from
	// the nodes of --nodes N (sharded by request index) instead of this
	// process; the records come back here. Nil: this process sends.
	Load LoadFleet
	// Prompts synthesizes prompts in the run's tokenizer (nil: the
	// default tokenizer's, shape.DefaultSynth).
	Prompts *shape.Synth
	// Tokenizer is the run's tokenizer, which Prompts was built from (nil:
	// the default): its spec is what the nodes of Load build their own from.
	Tokenizer *tokenizer.Ref
	// EmbeddingTokenizer, when set, counts embedding requests' inputs
	// (their records' input_tokens); nil: they are not counted.
	EmbeddingTokenizer *tokenizer.Ref
}

// DataflowStarter starts an engine for graph g whose operators reach the
// target at targetURL, deploys g on it and waits for its workers. notes
// say where it ran. stop releases the engine (its workers, its server)
// and returns what it counted (duplicates dropped at the sink,
// redeliveries, dead letters) as notes for the run's record.
type DataflowStarter func(ctx context.Context, g dataflow.Graph, targetURL string) (eng dataflow.Engine, stop func() ([]string, error), notes []string, err error)

// Offset returns t as nanoseconds since Env.Start (0 for a zero time).
// Synth is Prompts, or the default tokenizer's synthesizer when none was
// set: what every prompt and length of the run is made and counted with.
func (e *Env) Synth() *shape.Synth {
	if e.Prompts != nil {
		return e.Prompts
	}
	return shape.DefaultSynth()
}

func (e *Env) Offset(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(int64(t.Sub(e.Start)), 1)
}

// Outcome is what a workload's Run reports besides its requests.
type Outcome struct {
	Phases   []summary.Phase
	LoadMode string   // load.ModeOpen or load.ModeClosed
	Notes    []string // e.g. "the target cannot switch policy; ran with its own"
	// Result is the Q's typed answer (run.json "result"): the answer
	// sentence, the primary metric, every other metric with its state,
	// drill events and the tables behind the answer. The runner adds the
	// run-level metrics, judges the targets and checks it.
	Result result.Result
	// Bench, when set, replaces the runner's per-phase bench.txt lines;
	// each Name is what follows "Benchmark<ID><Name>/backend=<backend>/"
	// (e.g. "policy=fifo/type=llm/priority=critical"). A name may repeat
	// (one line per round, like go test -count).
	Bench []record.BenchLine
	// Rows are unified rows of their own, one per configuration the Q
	// compares (a policy, a scale), besides the run's row.
	Rows []Row
	// Invalid are reasons this repetition is not valid or not comparable
	// (e.g. drill events the target could not perform); the runner adds
	// them to the run's invalid reasons.
	Invalid []string
	// Files are extra record files for the run directory (events.jsonl …).
	Files []record.File
}

// Row is one configuration's unified row: the run's identity plus these
// figures (latencies in ms; nil: not measured), with Config in its
// metadata and Primary as the row's primary metric.
type Row struct {
	Config                       string // e.g. "policy=fifo"
	Throughput, LatencyP50       *float64
	LatencyP95, LatencyP99       *float64
	SuccessRate, DurationSeconds *float64
	Primary                      *result.Metric
	Metadata                     map[string]any
}

// PolicyRow is the row of one policy's requests, summarised in st over
// seconds: ok requests per second, E2E quantiles (a failed request
// counting +∞, SetLatency), success rate, and primary named
// "<policy>.<its name>".
func PolicyRow(policy string, st reqset.Stats, seconds float64, primary result.Metric) Row {
	primary.Name = policy + "." + primary.Name
	r := Row{Config: "policy=" + policy, Throughput: record.F(float64(st.OK) / max(seconds, 1e-9)),
		SuccessRate: record.Sampled(st.SuccessRate, st.N), DurationSeconds: record.F(seconds), Primary: &primary,
		Metadata: map[string]any{"policy": policy}}
	r.SetLatency(tailMetric(summary.DefE2EP50, st.TailP50, st.E2EP50, st), tailMetric(summary.DefE2EP95, st.TailP95, st.E2EP95, st),
		tailMetric(summary.DefE2EP99, st.TailP99, st.E2EP99, st))
	if st.OK < st.N && st.OK > 0 {
		r.Metadata[summary.MetaLatencyOK] = map[string]any{"p50": record.F(st.E2EP50), "p95": record.F(st.E2EP95), "p99": record.F(st.E2EP99),
			"n": st.OK, "note": "successes only: the failed requests left out"}
	}
	return r
}

// SetLatency puts the E2E quantile metrics ms (summary.DefE2EP50, …P95,
// …P99; failures +∞) into r's latency columns, with every column's state
// in its metadata (summary.LatencyCells): a row's columns are its own,
// never the run's.
func (r *Row) SetLatency(ms ...result.Metric) {
	cells, meta := summary.LatencyCells(ms)
	r.LatencyP50, r.LatencyP95, r.LatencyP99 = cells[0], cells[1], cells[2]
	if r.Metadata == nil {
		r.Metadata = map[string]any{}
	}
	for k, v := range meta {
		r.Metadata[k] = v
	}
}

// tailMetric is an E2E quantile over st's requests, failures +∞ (tail;
// ok the successes' own): measured when finite, never when every request
// failed, a bound [ok, ∞) when failures reach its rank.
func tailMetric(d result.Def, tail, ok float64, st reqset.Stats) result.Metric {
	switch {
	case st.N == 0:
		return d.NotMeasurable("no request")
	case st.OK == 0:
		return d.Never(fmt.Sprintf("every request of %d failed: with a failure counting +∞ the quantile is +∞", st.N))
	case math.IsInf(tail, 1):
		return d.Within(ok, math.Inf(1), st.N, fmt.Sprintf("%d of %d requests failed, more than the quantile allows: with a failure counting +∞ it is +∞", st.N-st.OK, st.N))
	}
	return d.Measure(tail, st.N, "")
}

// Targeted is implemented by a Config that holds its Q's metrics to
// targets (config key qN.target): the runner judges them on the result,
// and a target missed makes `sagebench run` exit 6.
type Targeted interface {
	Targets() result.Targets
}

// Targeting is the qN.target block; every Q's Config embeds it (yaml
// ",inline") and so implements Targeted.
type Targeting struct {
	// Target holds the Q's metrics to bounds: metric name → bound (the
	// metric's direction says which side passes). A run that misses one
	// exits 6. It changes no request, so config_hash leaves it out.
	Target result.Targets `yaml:"target,omitempty" json:"target,omitempty"`
}

// Targets are the bounds of the block.
func (t *Targeting) Targets() result.Targets { return t.Target }

var _ Targeted = (*Targeting)(nil)
