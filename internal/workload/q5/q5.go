// Package q5 is Q5 HeteroResilience: a heterogeneous pool (fast H100 and
// slow A10G LLM engines from the profile catalog, plus an embedder), each
// engine its own process. Before the fault it measures routing quality —
// the share of urgent requests served by fast engines against the share
// an ideal router would give, and goodput against the pool's capacity;
// then the drill timeline (internal/drill) SIGKILLs a fast engine that
// carries about a quarter of the capacity. Primary: recovery time (until
// the windowed p99 is back within the SLO for the hold time) and
// post-recovery throughput ÷ pre-fault throughput, reported against the
// SAGE project's target (10 s, 90 %).
package q5

import (
	"bytes"
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// Spec is Q5's catalog entry.
func Spec() workload.Spec {
	return workload.Spec{
		ID: "Q5", Name: "HeteroResilience", Entry: "heterogeneity",
		Description: "heterogeneous pool (fast and slow engine processes); routing quality, then a fast engine SIGKILLed mid-run; primary: recovery time and post-recovery throughput ÷ pre-fault (SAGE target: 10 s, 90 %)",
		New:         func(quick bool) workload.Workload { return &q5{cfg: Default(quick)} },
		Primary:     defRecovery,
	}
}

// Config configures Q5 (config section q5).
type Config struct {
	// Base is the load, the timeline and the targets; the default
	// targets are the SAGE project's goal for this drill: recovery_s ≤
	// 10, throughput_ratio ≥ 0.9.
	drill.Base `yaml:",inline" json:",inline"`
	Pool       []Engine `yaml:"pool" json:"pool"`
}

// Engine is one engine of the pool; Fast marks the engines urgent
// requests should go to.
type Engine struct {
	ID      string `yaml:"id" json:"id"`
	Kind    string `yaml:"kind" json:"kind"`
	Profile string `yaml:"profile" json:"profile"`
	Fast    bool   `yaml:"fast" json:"fast"`
}

// Default: three fast (H100) and two slow (A10G) LLM engines and a CPU
// embedder; full scale 3 minutes at 30 req/s with the kill at 60 s; quick
// 24 s at 10 req/s with the kill at 10 s.
func Default(quick bool) *Config {
	c := &Config{
		Base: drill.Base{Load: drill.DefaultLoad(30, 3*time.Minute)},
		Pool: []Engine{
			{ID: "llm-fast-0", Kind: "llm", Profile: "llama3.1-8b-h100", Fast: true},
			{ID: "llm-fast-1", Kind: "llm", Profile: "llama3.1-8b-h100", Fast: true},
			{ID: "llm-fast-2", Kind: "llm", Profile: "llama3.1-8b-h100", Fast: true},
			{ID: "llm-slow-0", Kind: "llm", Profile: "llama3.1-8b-a10g"},
			{ID: "llm-slow-1", Kind: "llm", Profile: "llama3.1-8b-a10g"},
			{ID: "embed-0", Kind: "embedding", Profile: "bge-small-cpu"},
		},
	}
	c.Drill = drill.DefaultConfig(quick)
	c.Target = result.Targets{defRecovery.Name: 10, defThroughputRatio.Name: 0.9}
	kill := 60 * time.Second
	if quick {
		c.Load = drill.QuickLoad(10, 24*time.Second)
		kill = 10 * time.Second
	}
	c.Drill.Events = []drill.Event{{At: kill, Action: drill.Kill, Engine: "llm-fast-0"}}
	return c
}

// Validate reports the first problem, naming the q5 key.
func (c *Config) Validate() error {
	fast := 0
	for i, e := range c.Pool {
		if e.ID == "" || e.Profile == "" || (e.Kind != "llm" && e.Kind != "embedding") {
			return fmt.Errorf("q5.pool[%d]: id, profile and kind (llm or embedding) are required", i)
		}
		if e.Fast {
			fast++
		}
	}
	if fast == 0 {
		return fmt.Errorf("q5.pool: mark at least one engine fast: true")
	}
	return c.Base.Validate("q5", c.Drill.Events, defs)
}

// StackYAML is the pool, every engine a process, hybrid scheduling
// (priority for LLM requests) and fast health probes.
func (q *q5) StackYAML() []byte {
	var b bytes.Buffer
	b.WriteString("policy: hybrid\nengines:\n")
	for _, e := range q.cfg.Pool {
		fmt.Fprintf(&b, "  - {id: %s, kind: %s, profile: %s, process: true}\n", e.ID, e.Kind, e.Profile)
	}
	b.WriteString("index: {size: 0}\nhealth: {interval: 250ms, eject_after: 2}\n")
	return b.Bytes()
}
