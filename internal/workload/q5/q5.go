// Package q5 is Q5 HeteroResilience: a heterogeneous pool (fast H100 and
// slow A10G LLM engines from the profile catalog, plus an embedder), each
// engine its own process, loaded to a share of the capacity the drill
// measures first (internal/drill) — enough that losing the fast engine
// leaves the survivors past theirs. Before the fault it measures routing
// quality: the share of urgent requests served by fast engines against
// the share an ideal router would give, and goodput against the measured
// capacity; then the drill timeline SIGKILLs the fast engine llm-fast-0
// and restarts it a few seconds later. Primary: recovery time — from the
// kill until the windowed TTFT p99 is back within the SLO for the hold
// time, to ± the window step — and the delivered throughput after
// recovery ÷ before the fault, against the SAGE project's target (10 s,
// 90 %).
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
		Description: "heterogeneous pool (fast and slow engine processes) loaded to 0.7 of its measured capacity; routing quality, then the fast engine SIGKILLed and restarted; primary: recovery time and delivered throughput after ÷ before (SAGE target: 10 s, 90 %)",
		New:         func(quick bool) workload.Workload { return &q5{cfg: Default(quick)} },
		Primary:     defRecovery,
		Figure:      workload.Figure{Recipe: workload.FigureTimeline},
		Files:       drill.FileNames,
	}
}

// Config configures Q5 (config section q5).
type Config struct {
	// Base is the load, the timeline and the targets; the default
	// targets are the SAGE project's goal for this drill — recovery_s ≤
	// 10, throughput_ratio ≥ 0.9 — and every drill's: lost ≤ 0.
	drill.Base `yaml:",inline" json:",inline"`
	Pool       []Engine `yaml:"pool" json:"pool"`
}

// Engine is one engine of the pool; Fast marks the engines urgent
// requests should go to; Slots caps an LLM engine's running batch (0:
// its profile's).
type Engine struct {
	ID      string `yaml:"id" json:"id"`
	Kind    string `yaml:"kind" json:"kind"`
	Profile string `yaml:"profile" json:"profile"`
	Fast    bool   `yaml:"fast" json:"fast"`
	Slots   int    `yaml:"slots,omitempty" json:"slots,omitempty"`
}

// Default: one fast LLM engine (H100, 6 running requests) and two slow
// ones (A10G, 12 each) and a CPU embedder, so that llm-fast-0 carries
// about 60 % of the pool's capacity; load at 0.7 of the measured
// capacity, which leaves the survivors at about 1.7× theirs after the
// kill. Full scale 3 minutes, the kill at 60 s and the restart 10 s
// later; quick 22 s, the kill at 8 s and the restart 3 s later.
func Default(quick bool) *Config {
	c := &Config{
		Base: drill.Base{Load: drill.SizedLoad(3 * time.Minute)},
		Pool: []Engine{
			{ID: "llm-fast-0", Kind: "llm", Profile: "llama3.1-8b-h100", Fast: true, Slots: 6},
			{ID: "llm-slow-0", Kind: "llm", Profile: "llama3.1-8b-a10g", Slots: 12},
			{ID: "llm-slow-1", Kind: "llm", Profile: "llama3.1-8b-a10g", Slots: 12},
			{ID: "embed-0", Kind: "embedding", Profile: "bge-small-cpu"},
		},
	}
	c.Drill = drill.DefaultConfig(quick)
	c.Target = result.Targets{defRecovery.Name: 10, defThroughputRatio.Name: 0.9, drill.DefLost.Name: 0}
	kill, down := 60*time.Second, 10*time.Second
	if quick {
		c.Load = drill.QuickSizedLoad(22 * time.Second)
		kill, down = 8*time.Second, 3*time.Second
	}
	c.Drill.Events = []drill.Event{{At: kill, Action: drill.Kill, Engine: "llm-fast-0"}, {At: kill + down, Action: drill.Restart, Engine: "llm-fast-0"}}
	return c
}

// StackOnlyKeys are the keys that configure the embedded stack only.
func (c *Config) StackOnlyKeys() []string { return []string{"q5.pool"} }

// Validate reports the first problem, naming the q5 key.
func (c *Config) Validate() error {
	fast := 0
	for i, e := range c.Pool {
		if e.ID == "" || e.Profile == "" || (e.Kind != "llm" && e.Kind != "embedding") || e.Slots < 0 {
			return fmt.Errorf("q5.pool[%d]: id, profile and kind (llm or embedding) are required, slots ≥ 0", i)
		}
		if e.Fast {
			fast++
		}
	}
	if fast == 0 {
		return fmt.Errorf("q5.pool: mark at least one engine fast: true")
	}
	kill := false
	for _, e := range c.Drill.Events {
		kill = kill || e.Action == drill.Kill
	}
	if !kill {
		return fmt.Errorf("q5.drill.events: Q5 measures the recovery from a kill; list one")
	}
	return c.Base.Validate("q5", c.Drill.Events, defs)
}

// StackYAML is the pool, every engine a process, hybrid scheduling
// (priority for LLM requests) and fast health probes.
func (q *q5) StackYAML() []byte {
	var b bytes.Buffer
	b.WriteString("policy: hybrid\nengines:\n")
	for _, e := range q.cfg.Pool {
		fmt.Fprintf(&b, "  - {id: %s, kind: %s, profile: %s, process: true, slots: %d}\n", e.ID, e.Kind, e.Profile, e.Slots)
	}
	b.WriteString("index: {size: 0}\nhealth: {interval: 250ms, eject_after: 2}\n")
	return b.Bytes()
}
