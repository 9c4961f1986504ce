package record

import "time"

// Floor is a run's measurement floor: how far the harness's own
// measurements are from the truth at this workload's rate and mix on this
// machine, from `sagebench calibrate` (an exact-deadline server driven
// through the same client, driver and records). Latency errors are
// measured minus true, in ms; an effect smaller than the p99 error cannot
// be told from the harness's own error.
type Floor struct {
	Source        string     `json:"source"` // what was driven against what, e.g. "Q2 quick plan vs exact server (ttft 50ms, itl 10ms)"
	MeasuredAt    time.Time  `json:"measured_at"`
	LoadAvg1      float64    `json:"loadavg_1m,omitempty"`
	TTFT          ErrorStats `json:"ttft"`
	ITL           ErrorStats `json:"itl"`
	E2E           ErrorStats `json:"e2e"`
	TargetRate    float64    `json:"target_rate"`        // req/s of the plan
	DeliveredRate float64    `json:"delivered_rate"`     // req/s the driver delivered
	RateErrorPct  float64    `json:"rate_error_pct"`     // (delivered ÷ target − 1) × 100
	ServerLate    ErrorStats `json:"server_late"`        // the exact server's own lateness (its reported − configured TTFT)
	Requests      int        `json:"requests"`           // measured requests (ok)
	Failed        int        `json:"failed"`             // requests that failed against the exact server
	Notes         []string   `json:"notes,omitempty"`    // e.g. a goal not met
	GoalMet       bool       `json:"goal_met"`           // median error ≤ 1 % and p99 ≤ 0.5 ms for TTFT and E2E, rate within 0.5 %
	Goal          string     `json:"goal,omitempty"`     // the goal, in words
	Workload      string     `json:"workload,omitempty"` // Q2 …
	ConfigHash    string     `json:"config_hash,omitempty"`
}

// ErrorStats summarises measured-minus-true errors, in ms.
type ErrorStats struct {
	Count  int     `json:"count"`
	Median float64 `json:"median_ms"`
	P99    float64 `json:"p99_ms"`
	Max    float64 `json:"max_ms"`
	// MedianPct is the median error as a percentage of the true value
	// (0 when the true value is 0).
	MedianPct float64 `json:"median_pct"`
}
