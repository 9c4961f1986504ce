package ray

import (
	"bytes"
	"io"
)

// PlanVersion is the plan format the driver understands.
const PlanVersion = 1

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
	Headers  map[string]string `json:"headers,omitempty"` // sent on every call (may hold the target's key)
	Tenant   string            `json:"tenant,omitempty"`
	// DeadlineMS, when > 0, is sent as X-SLO-Deadline-Ms (time left of
	// the transaction's end-to-end SLO).
	DeadlineMS int64     `json:"deadline_ms,omitempty"`
	TopK       int       `json:"top_k"`
	Embedding  string    `json:"embedding_model"`
	LLM        string    `json:"llm_model"`
	MaxTokens  int       `json:"max_tokens"`
	Stages     []Stage   `json:"stages"`
	Arrivals   []Arrival `json:"arrivals"`
	TimeoutS   float64   `json:"request_timeout_s"` // one HTTP call
}

// Stage is one stage of the graph with its concurrency.
type Stage struct {
	Name        string  `json:"name"`
	Op          string  `json:"op"` // embed | retrieve | generate
	Model       string  `json:"model,omitempty"`
	Parallelism int     `json:"parallelism"`
	TimeoutS    float64 `json:"timeout_s,omitempty"`
}

// Arrival is one transaction: its sequence number, its intended offset
// from the schedule's zero, and its question.
type Arrival struct {
	Seq      int    `json:"seq"`
	OffsetNS int64  `json:"offset_ns"`
	Query    string `json:"query"`
}

// LogFilter passes the job log to w without the driver's marked lines
// (records are many; the user wants the rest).
type LogFilter struct {
	W       io.Writer
	partial []byte
}

func (f *LogFilter) Write(p []byte) (int, error) {
	f.partial = append(f.partial, p...)
	for {
		i := bytes.IndexByte(f.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(f.partial[:i+1])
		f.partial = f.partial[i+1:]
		if mark, _ := split(line); mark == "" || mark == MarkMeta || mark == MarkDone {
			if _, err := io.WriteString(f.W, line); err != nil {
				return len(p), err
			}
		}
	}
}

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
