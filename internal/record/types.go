package record

import (
	"encoding/json"
	"math"
	"time"

	"github.com/sagebench/sagebench/internal/result"
)

// SchemaVersion is the version of run.json this build writes: 2 added
// "result" (the typed answer) and "summary.target_metrics", and dropped
// "summary.primary", "summary.extra" and "drill". A run.json without
// schema_version is version 1.
const SchemaVersion = 2

// Run is the content of run.json.
type Run struct {
	SchemaVersion  int             `json:"schema_version"`
	RunID          string          `json:"run_id"`
	Workload       string          `json:"workload"` // Q1..Q8
	Name           string          `json:"name"`     // e.g. ControlMix
	Entry          string          `json:"entry"`    // e.g. control_plane
	Backend        string          `json:"backend"`
	Repetition     int             `json:"repetition"`
	Seed           int64           `json:"seed"`
	Complete       bool            `json:"complete"`
	Valid          bool            `json:"valid"`
	InvalidReasons []string        `json:"invalid_reasons"`
	RunConfig      json.RawMessage `json:"run_config"`
	ConfigHash     string          `json:"config_hash"`
	Target         string          `json:"target"`    // description, never a secret
	LoadMode       string          `json:"load_mode"` // open-loop or closed-loop
	Environment    Environment     `json:"environment"`
	StartedAt      time.Time       `json:"started_at"`
	EndedAt        time.Time       `json:"ended_at"`
	Summary        Summary         `json:"summary"`
	// Phases are the run's phases in the order they ran, on the run's
	// clock, so that a phase's membership (a burst, the span before a
	// kill) is read from the record, never guessed.
	Phases []Phase  `json:"phases,omitempty"`
	Notes  []string `json:"notes,omitempty"` // e.g. a policy the target could not switch
	// Result is the Q's typed answer: the answer sentence, the primary
	// and other metrics each with its state, drill events, targets and
	// the tables behind the answer (docs/records.md). Nil in a run that
	// never finished, and in schema version 1.
	Result *result.Result `json:"result,omitempty"`
	// MeasurementFloor is the harness's own error at this run's rate and
	// mix, when the run was calibrated (--calibrate).
	MeasurementFloor *Floor `json:"measurement_floor,omitempty"`
	// WorkloadHash is ConfigHash without the backend: the sage and ray
	// runs of one workload, seed and config share it (runconfig).
	WorkloadHash string `json:"workload_hash,omitempty"`
	// Integrity counts the messages on a distributed run's record
	// subjects that were rejected (unauthenticated, outside the sender's
	// shard, malformed, oversized): none reached requests.jsonl, and the
	// run is invalid. Nil when none was.
	Integrity *Integrity `json:"integrity,omitempty"`
}

// Integrity is the account of rejected record messages.
type Integrity struct {
	Rejected int            `json:"rejected"`
	ByReason map[string]int `json:"by_reason"`
}

// Environment is the manifest of the machine and build that produced a run.
type Environment struct {
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUModel   string `json:"cpu_model"`
	Cores      int    `json:"cores"`
	MemoryMiB  int64  `json:"memory_mib"`
	Hostname   string `json:"hostname"`
	Version    string `json:"sagebench_version"`
	Commit     string `json:"sagebench_commit"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// LoadAvg1 is the 1-minute load average when the run started (0 when
	// unknown): above Cores, other processes competed with the driver.
	LoadAvg1 float64 `json:"loadavg_1m,omitempty"`
}

// Phase is one phase of a run: its name, its start (the intended time of
// its schedule's zero) and end (its last request's end) in ms since
// Run.StartedAt, the requests its schedule held and their offered rate
// (requests ÷ the schedule's span; 0 for one request or a closed loop).
type Phase struct {
	Name          string  `json:"name"`
	StartMs       float64 `json:"start_ms"`
	EndMs         float64 `json:"end_ms"`
	Scheduled     int     `json:"scheduled"`
	ScheduleSpanS float64 `json:"schedule_span_s"`
	OfferedRate   float64 `json:"offered_rate"`
	Interrupted   bool    `json:"interrupted,omitempty"`
	ClosedLoop    bool    `json:"closed_loop,omitempty"`
}

// Summary holds the request-level metrics of one run (one repetition).
type Summary struct {
	Requests        int     `json:"requests"`
	Succeeded       int     `json:"succeeded"`
	Failed          int     `json:"failed"`
	DurationSeconds float64 `json:"duration_seconds"`
	TargetRate      float64 `json:"target_rate"`    // req/s of the schedule
	DeliveredRate   float64 `json:"delivered_rate"` // req/s actually sent
	Throughput      float64 `json:"throughput"`     // completed req/s
	Goodput         float64 `json:"goodput"`        // req/s meeting their SLO
	SLOAttainment   float64 `json:"slo_attainment"` // fraction in [0,1]
	SuccessRate     float64 `json:"success_rate"`   // fraction in [0,1]
	ScheduleLag     Latency `json:"schedule_lag"`
	// E2E is the successes' latency summary (HDR): failed requests are
	// not in it. E2ECountingFailures beside it are the E2E p50, p95 and
	// p99 over every request, a failed one counting +∞ (measured, a
	// bound, or never; summary.Quantile) — the figures a plain "E2E p99"
	// means everywhere. Absent in records written before.
	E2E                 Latency         `json:"e2e"`
	E2ECountingFailures []result.Metric `json:"e2e_counting_failures,omitempty"`
	Groups              []Group         `json:"groups"`
	// TargetMetrics are the target's own /metrics series the run scraped,
	// condensed (mean, p95, max of each series; finite values only).
	TargetMetrics map[string]float64 `json:"target_metrics,omitempty"`
	// HarnessOverhead is, over the requests whose target reported its own
	// timing (the reference stack does), the client's time from the actual
	// send minus the server's from receipt: network plus harness.
	HarnessOverhead *Overhead `json:"harness_overhead,omitempty"`
	// Retry is what the client's retry policy did (docs/requests.md):
	// present when a request was sent more than once.
	Retry *RetrySummary `json:"retry,omitempty"`
}

// RetrySummary accounts for the requests sent more than once.
// Amplification is attempts ÷ requests, the load the target carried per
// request asked; GoodputWithoutRetries counts only requests that met
// their SLO on the first attempt (what the run would have delivered had
// the failures stayed failures); UserLatency is from the first send to
// the final answer, of the requests that succeeded.
type RetrySummary struct {
	Requests                 int     `json:"requests"`
	Attempts                 int     `json:"attempts"`
	Amplification            float64 `json:"amplification"`
	Retried                  int     `json:"retried"`
	TransportReplays         int     `json:"transport_replays"`
	SucceededFirstAttempt    int     `json:"succeeded_first_attempt"`
	Goodput                  float64 `json:"goodput"`
	GoodputWithoutRetries    float64 `json:"goodput_without_retries"`
	ThroughputWithoutRetries float64 `json:"throughput_without_retries"`
	UserLatency              Latency `json:"user_latency"`
}

// Overhead is the client-minus-server time of TTFT and E2E, in ms.
type Overhead struct {
	TTFT Latency `json:"ttft"`
	E2E  Latency `json:"e2e"`
}

// Group summarises the requests sharing a set of labels (type, tenant,
// priority, phase, policy …).
type Group struct {
	Labels map[string]string `json:"labels"`
	Count  int               `json:"count"`
	Errors int               `json:"errors"`
	// StreamErrors counts the failed requests of a type that streams a
	// first token (protocol.Streams): a group of mixed types (a tenant,
	// a priority, a phase) counts only those +∞ in its TTFT. Absent in
	// records written before (nil).
	StreamErrors  *int    `json:"stream_errors,omitempty"`
	SLOAttainment float64 `json:"slo_attainment"`
	Goodput       float64 `json:"goodput"`
	E2E           Latency `json:"e2e"`     // from intended send
	Service       Latency `json:"service"` // from actual send
	TTFT          Latency `json:"ttft"`    // from intended send
	TPOT          Latency `json:"tpot"`
	ITL           Latency `json:"itl"`
	// E2ECountingFailures and TTFTCountingFailures are the group's E2E
	// p50/p95/p99 and TTFT p50/p99 over every request of it, a failed one
	// counting +∞ (measured, a bound, or never; summary.Quantile), beside
	// the successes' e2e and ttft above — as summary.e2e_counting_failures
	// is beside summary.e2e. TTFT only for a group whose requests stream
	// (an embedding has no first token to wait for). Absent in records
	// written before.
	E2ECountingFailures  []result.Metric `json:"e2e_counting_failures,omitempty"`
	TTFTCountingFailures []result.Metric `json:"ttft_counting_failures,omitempty"`
}

// Latency is a distribution summary in milliseconds (HDR histogram based).
type Latency struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p999_ms"`
	Max   float64 `json:"max_ms"`
}

// Request is one line of requests.jsonl: one request, or one transaction or
// one stage of a transaction (TxnID links them). Offsets (…NS) are
// nanoseconds since Run.StartedAt; zero means "did not happen".
type Request struct {
	ID         string  `json:"id"`
	Seq        int     `json:"seq"`
	Kind       string  `json:"kind"` // request | txn | stage
	Type       string  `json:"type"` // llm | embedding | retrieve | rag
	Stage      string  `json:"stage,omitempty"`
	TxnID      string  `json:"txn_id,omitempty"`
	Phase      string  `json:"phase,omitempty"` // sub-run: policy, contended, burst …
	Tenant     string  `json:"tenant,omitempty"`
	Priority   string  `json:"priority,omitempty"`
	Model      string  `json:"model,omitempty"`
	IntendedNS int64   `json:"intended_ns"`
	SentNS     int64   `json:"sent_ns"`
	FirstByte  int64   `json:"first_byte_ns,omitempty"`
	FirstToken int64   `json:"first_token_ns,omitempty"`
	EndNS      int64   `json:"end_ns"`
	TokenNS    []int64 `json:"token_ns,omitempty"`
	// TokenNSDropped counts token timestamps left out of TokenNS to bound
	// the line (see Bound): TokenNS then holds the first ones and the last.
	TokenNSDropped int     `json:"token_ns_dropped,omitempty"`
	E2EMs          float64 `json:"e2e_ms"`     // end - intended
	ServiceMs      float64 `json:"service_ms"` // end - sent
	LagMs          float64 `json:"lag_ms"`     // sent - intended
	TTFTMs         float64 `json:"ttft_ms,omitempty"`
	TPOTMs         float64 `json:"tpot_ms,omitempty"`
	Status         int     `json:"status"`
	OK             bool    `json:"ok"`
	SLOMet         bool    `json:"slo_met"`
	ErrorClass     string  `json:"error_class,omitempty"`
	Error          string  `json:"error,omitempty"`
	Engine         string  `json:"engine,omitempty"`
	Retries        int     `json:"retries,omitempty"`
	PromptTok      int     `json:"prompt_tokens,omitempty"`
	// QueueMs is the gateway queue wait the target reported
	// (X-Sagebench-Queue-Us), in ms; nil when it reported none.
	QueueMs   *float64 `json:"queue_ms,omitempty"`
	OutputTok int      `json:"completion_tokens,omitempty"`
	// ServerTTFTMs and ServerE2EMs are the target's own account of this
	// request (protocol.HeaderServerTiming), counted from when it received
	// it; 0 when the target sent none. Client minus server is the network
	// plus the harness.
	ServerTTFTMs float64 `json:"server_ttft_ms,omitempty"`
	ServerE2EMs  float64 `json:"server_e2e_ms,omitempty"`
	// FirstAnswerToken is the offset of the first answer (content) token
	// and TTFATMs the time to it from the intended send: later than
	// FirstToken / TTFTMs (the first token of any kind) when a reasoning
	// model thinks first.
	FirstAnswerToken int64   `json:"first_answer_token_ns,omitempty"`
	TTFATMs          float64 `json:"ttfat_ms,omitempty"`
	// Note says something to know about an ok request (a stream that
	// ended after its finish_reason without [DONE], say).
	Note string `json:"note,omitempty"`
	// Node is the load-generating node that sent the request (a worker
	// of --nodes N); empty when the run's own process sent it.
	Node string `json:"node,omitempty"`
	// InputTokens and OutputTokens are the intended lengths in tokens of
	// the run's tokenizer (prompt_tokens and completion_tokens are what
	// the server reported in usage): the prompt as synthesized (shared
	// prefix and conversation included; rendered with the chat template
	// when the run has one) and max_tokens. An embedding request's
	// InputTokens is its inputs' count in the run's embedding tokenizer
	// (0 without one).
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
	// PrefixGroup is the shared system prompt the request started with
	// (1-based; 0: none).
	PrefixGroup int `json:"prefix_group,omitempty"`
	// Session and Turn place a request in a multi-turn session (Turn
	// counts from 1; 0: not a session).
	Session string `json:"session,omitempty"`
	Turn    int    `json:"turn,omitempty"`
	// Attempt is the attempt whose outcome the record reports and
	// Attempts the times the request was sent under the client's retry
	// policy (1 and 1: sent once; 0: never sent, or a record of an older
	// build). SentNS is the first attempt's send, EndNS the final
	// answer's: ServiceMs is the latency the user saw.
	Attempt  int `json:"attempt,omitempty"`
	Attempts int `json:"attempts,omitempty"`
	// Replays counts net/http's own replays on a new connection of a
	// request none of whose bytes had been written (the target never saw
	// them); nothing else is ever replayed by the transport.
	Replays int `json:"replays,omitempty"`
	// Tries are the attempts, in order, when there was more than one (at
	// most MaxTries kept).
	Tries []Try `json:"tries,omitempty"`
}

// Try is one attempt of a request sent more than once.
type Try struct {
	N          int    `json:"n"`
	Hedge      bool   `json:"hedge,omitempty"`      // sent while an earlier attempt was in flight
	Superseded bool   `json:"superseded,omitempty"` // a hedge race's loser, cancelled by the client
	SentNS     int64  `json:"sent_ns"`
	EndNS      int64  `json:"end_ns"`
	Status     int    `json:"status,omitempty"`
	ErrorClass string `json:"error_class,omitempty"`
	Replays    int    `json:"replays,omitempty"`
}

// Unified is one row of unified_results.jsonl/.csv: field for field the
// schema of the original Python benchmark_sage, then the run's primary
// metric. A figure the run did not measure is null (an empty CSV cell),
// never 0.
type Unified struct {
	Backend         string         `json:"backend"`
	Workload        string         `json:"workload"`
	RunID           string         `json:"run_id"`
	Seed            int64          `json:"seed"`
	Nodes           int            `json:"nodes"`
	Parallelism     int            `json:"parallelism"`
	Throughput      *float64       `json:"throughput"`
	LatencyP50      *float64       `json:"latency_p50"`
	LatencyP95      *float64       `json:"latency_p95"`
	LatencyP99      *float64       `json:"latency_p99"`
	SuccessRate     *float64       `json:"success_rate"`
	DurationSeconds *float64       `json:"duration_seconds"`
	Timestamp       string         `json:"timestamp"`
	ConfigHash      string         `json:"config_hash"`
	BackendHash     string         `json:"backend_hash"`
	Metadata        map[string]any `json:"metadata"`
	// The primary metric: its name, value (null unless measured), unit,
	// state (result.State) and interval (a bound's bracket or the
	// confidence interval of a measured value; null ends are open or
	// absent).
	PrimaryMetric string   `json:"primary_metric"`
	PrimaryValue  *float64 `json:"primary_value"`
	PrimaryUnit   string   `json:"primary_unit"`
	PrimaryState  string   `json:"primary_state"`
	PrimaryLo     *float64 `json:"primary_lo"`
	PrimaryHi     *float64 `json:"primary_hi"`
}

// F returns a pointer to v, or nil when v is NaN or infinite: the form of
// a figure in a unified row.
func F(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Sampled is F(v) when n samples stand behind v, else nil.
func Sampled(v float64, n int) *float64 {
	if n <= 0 {
		return nil
	}
	return F(v)
}

// Millis is d in milliseconds, the unit of a record's latencies.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
