// Package q7 is Q7 ReconfigDrill: steady mixed load while the reference
// stack is reconfigured on a schedule — a policy switch, an engine added,
// an engine drained and then removed — by the drill timeline
// (internal/drill). Primary: requests failed by reconfiguration (must be
// 0), each attributed to the nearest event; secondary: p99 excess around
// each event against the steady windows and time to steady after it.
package q7

import (
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// Spec is Q7's catalog entry.
func Spec() workload.Spec {
	return workload.Spec{
		ID: "Q7", Name: "ReconfigDrill", Entry: "reconfiguration",
		Description: "steady load through a policy switch, an engine added, an engine drained and removed; primary: requests failed by reconfiguration (must be 0)",
		New:         func(quick bool) workload.Workload { return &q7{cfg: Default(quick)} },
		Primary:     defFailed,
	}
}

// Config configures Q7 (config section q7).
type Config struct {
	// Base is the load, the timeline and the targets; the default target
	// is failed_by_reconfig ≤ 0.
	drill.Base `yaml:",inline" json:",inline"`
}

// Default: full scale 5 minutes at 20 req/s with an event a minute;
// quick 24 s at 8 req/s with an event every 4–5 s.
func Default(quick bool) *Config {
	at := []time.Duration{60 * time.Second, 120 * time.Second, 180 * time.Second, 240 * time.Second}
	c := &Config{Base: drill.Base{Load: drill.DefaultLoad(20, 5*time.Minute), Drill: drill.DefaultConfig(quick)}}
	c.Target = result.Targets{defFailed.Name: 0}
	if quick {
		at = []time.Duration{4 * time.Second, 8 * time.Second, 13 * time.Second, 17 * time.Second}
		c.Load = drill.QuickLoad(8, 24*time.Second)
	}
	c.Drill.Events = []drill.Event{
		{At: at[0], Action: drill.Policy, Policy: "priority"},
		{At: at[1], Action: drill.Add, Engine: "llm-2", Kind: "llm", Profile: "llama3.1-8b-h100"},
		{At: at[2], Action: drill.Drain, Engine: "llm-1"},
		{At: at[3], Action: drill.Remove, Engine: "llm-1"},
	}
	return c
}

// Validate reports the first problem, naming the q7 key.
func (c *Config) Validate() error { return c.Base.Validate("q7", c.Drill.Events, defs) }

// StackYAML is Q7's reference stack: two H100 LLM engines and a CPU
// embedder as processes, fifo until the policy switch.
func (q *q7) StackYAML() []byte {
	return []byte(`policy: fifo
engines:
  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100, process: true}
  - {id: llm-1, kind: llm, profile: llama3.1-8b-h100, process: true}
  - {id: embed-0, kind: embedding, profile: bge-small-cpu, process: true}
index: {size: 0}
health: {interval: 250ms}
`)
}
