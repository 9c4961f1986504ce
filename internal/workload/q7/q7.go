// Package q7 is Q7 ReconfigDrill: steady mixed load, sized to a share of
// the capacity the drill measures first, while the reference stack is
// reconfigured on a schedule — a policy switch, an engine added, an
// engine drained and then removed — by the drill timeline
// (internal/drill). Primary: requests failed by reconfiguration (must be
// 0): the failures inside an event's window [start − pre, end + post],
// plus requests sent that left no record; failures outside every window
// are background failures, reported apart. Secondary: p99 excess around
// each event against the steady windows, and each event's recovery
// (0 "no violation", recovered after a time or within a step, censored
// at the next event, or never recovered by the end of the load).
package q7

import (
	"fmt"
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
		Figure:      workload.Figure{Recipe: workload.FigureTimeline},
		Files:       drill.FileNames,
	}
}

// Config configures Q7 (config section q7).
type Config struct {
	// Base is the load, the timeline and the targets; the default targets
	// are failed_by_reconfig ≤ 0 and every drill's lost ≤ 0.
	drill.Base `yaml:",inline" json:",inline"`
	// Attribution is the window around each event whose failures it is
	// charged with.
	Attribution Attribution `yaml:"attribution" json:"attribution"`
}

// Attribution: a failed request whose intended send lies between Pre
// before an event started and Post after it returned is the event's.
type Attribution struct {
	Pre  time.Duration `yaml:"pre" json:"pre"`
	Post time.Duration `yaml:"post" json:"post"`
}

// Default: full scale 5 minutes at 0.7 of the measured capacity with an
// event a minute, failures charged within 5 s of an event; quick 23 s
// with an event every 4–5 s from 5 s (one window of warm-up and four of
// steady state first), within 2 s.
func Default(quick bool) *Config {
	at := []time.Duration{60 * time.Second, 120 * time.Second, 180 * time.Second, 240 * time.Second}
	c := &Config{Base: drill.Base{Load: drill.SizedLoad(5 * time.Minute), Drill: drill.DefaultConfig(quick)},
		Attribution: Attribution{Pre: 5 * time.Second, Post: 5 * time.Second}}
	c.Target = result.Targets{defFailed.Name: 0, drill.DefLost.Name: 0}
	if quick {
		at = []time.Duration{5 * time.Second, 9 * time.Second, 14 * time.Second, 18 * time.Second}
		c.Load = drill.QuickSizedLoad(23 * time.Second)
		c.Attribution = Attribution{Pre: 2 * time.Second, Post: 2 * time.Second}
	}
	c.Drill.Events = []drill.Event{
		{At: at[0], Action: drill.Policy, Policy: "priority"},
		{At: at[1], Action: drill.Add, Engine: "llm-2", Kind: "llm", Profile: "llama3.1-8b-h100", Slots: engineSlots},
		{At: at[2], Action: drill.Drain, Engine: "llm-1"},
		{At: at[3], Action: drill.Remove, Engine: "llm-1"},
	}
	return c
}

// engineSlots caps each LLM engine's running batch: a pool whose capacity
// the harness can saturate on a laptop (see docs/q7.md).
const engineSlots = 6

// Validate reports the first problem, naming the q7 key.
func (c *Config) Validate() error {
	if c.Attribution.Pre < 0 || c.Attribution.Post < 0 {
		return fmt.Errorf("q7.attribution: pre and post must be ≥ 0")
	}
	return c.Base.Validate("q7", c.Drill.Events, defs)
}

// StackYAML is Q7's reference stack: two H100 LLM engines (running at
// most engineSlots requests each) and a CPU embedder as processes, fifo
// until the policy switch.
func (q *q7) StackYAML() []byte {
	return fmt.Appendf(nil, `policy: fifo
engines:
  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100, process: true, slots: %[1]d}
  - {id: llm-1, kind: llm, profile: llama3.1-8b-h100, process: true, slots: %[1]d}
  - {id: embed-0, kind: embedding, profile: bge-small-cpu, process: true}
index: {size: 0}
health: {interval: 250ms}
`, engineSlots)
}
