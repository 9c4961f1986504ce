package ray

// PlanVersion is the plan format the driver understands. Version 2 keeps
// each stage's own settings (model, max_tokens, top_k, connections to
// warm) on the stage instead of plan-wide values.
const PlanVersion = 2

// PlanFile is the plan's name in the working_dir package.
const PlanFile = "plan.json"

// Plan is what the driver runs: the target, the stages, and every
// arrival with its intended offset and its query, so both backends see
// identical arrivals. The driver reads it from PlanFile.
type Plan struct {
	Version  int               `json:"version"`
	RunID    string            `json:"run_id"`
	Workload string            `json:"workload"`
	Target   string            `json:"target"`            // base URL, without /v1
	Headers  map[string]string `json:"headers,omitempty"` // sent on every call (never the target's key)
	// APIKeyEnv names the environment variable of the job holding the
	// target's API key (sent as Authorization: Bearer): the key is never
	// in the plan, the uploaded package or its copy in the cluster's
	// key-value store.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	Tenant    string `json:"tenant,omitempty"`
	// DeadlineMS, when > 0, is sent as X-SLO-Deadline-Ms (time left of
	// the transaction's end-to-end SLO).
	DeadlineMS int64 `json:"deadline_ms,omitempty"`
	// Embedding and LLM are the workload's models: the transaction
	// record's model is LLM (a stage's own model is on the stage).
	Embedding string    `json:"embedding_model"`
	LLM       string    `json:"llm_model"`
	Stages    []Stage   `json:"stages"`
	Arrivals  []Arrival `json:"arrivals"`
	TimeoutS  float64   `json:"request_timeout_s"` // one HTTP call without a stage timeout
	// ReadyTimeoutS bounds the stages' start-up (actors created, answered
	// ready, connections warmed) before the schedule's zero.
	ReadyTimeoutS float64 `json:"ready_timeout_s"`
}

// Stage is one stage of the graph with its own settings: the operator's
// model (embed, generate), max_tokens (generate), top_k (retrieve), its
// concurrency, and how many keep-alive connections to the target it
// opens before the schedule's zero (its pool holds at most Parallelism).
type Stage struct {
	Name        string  `json:"name"`
	Op          string  `json:"op"` // embed | retrieve | generate
	Model       string  `json:"model,omitempty"`
	MaxTokens   int     `json:"max_tokens,omitempty"`
	TopK        int     `json:"top_k,omitempty"`
	Parallelism int     `json:"parallelism"`
	WarmConns   int     `json:"warm_conns"`
	TimeoutS    float64 `json:"timeout_s,omitempty"`
}

// Arrival is one transaction: its sequence number, its intended offset
// from the schedule's zero, and its question.
type Arrival struct {
	Seq      int    `json:"seq"`
	OffsetNS int64  `json:"offset_ns"`
	Query    string `json:"query"`
}

// TargetKeyEnv is the variable sagebench passes the target's API key in,
// through the job's runtime_env env_vars, unless Config.TargetKeyEnv
// names one the cluster's own environment already holds.
const TargetKeyEnv = "SAGEBENCH_TARGET_API_KEY"

// Redacted is p without the header values (they may be credentials), for
// printing.
func (p Plan) Redacted() Plan {
	if len(p.Headers) > 0 {
		h := make(map[string]string, len(p.Headers))
		for k := range p.Headers {
			h[k] = "<redacted>"
		}
		p.Headers = h
	}
	return p
}
