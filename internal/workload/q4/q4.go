// Package q4 is Q4 ScaleFrontier (entry scalability): for each pool size
// n in a list, the highest arrival rate the target sustains within its
// SLO, and how that rate scales with n.
//
// Pipeline: per scale, the embedded pool is resized through the engines
// admin API (engines added or drained and removed); Search ramps the
// rate exponentially until a probe fails, then bisects; each probe is a
// short open-loop Poisson trial (its own phase) judged on its records:
// success ratio and p99 TTFT and E2E against the SLO, and its own driver
// lag — a probe the driver could not deliver stops the search as
// "driver-bound at R", never a figure of the target. A target without the
// admin API is measured at its current size only.
package q4

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Spec is Q4's catalog entry.
func Spec() workload.Spec {
	return workload.Spec{
		ID: "Q4", Name: "ScaleFrontier", Entry: "scalability", PhaseLabel: "probe", ShardedLoad: true,
		Description: "highest arrival rate meeting the SLO (p99 TTFT and E2E, ≥ 99 % success) for n = 1, 2, 4 engines, by exponential ramp and bisection of short open-loop probes; primary: scaling efficiency rate(n) ÷ (n · rate(1))",
		New:         func(quick bool) workload.Workload { return &q4{cfg: Default(quick)} },
		Primary:     defEfficiency,
	}
}

// Config configures Q4 ScaleFrontier (config section q4).
type Config struct {
	// Scales are the LLM engine counts to measure, in order.
	Scales []int `yaml:"scales" json:"scales"`
	// Probe is the length of one trial.
	Probe time.Duration `yaml:"probe" json:"probe"`
	// StartRate is the first probe's rate at the first scale; later
	// scales start at half of n × the first scale's frontier.
	StartRate float64 `yaml:"start_rate" json:"start_rate"`
	Growth    float64 `yaml:"growth" json:"growth"`       // ramp factor (> 1)
	Precision float64 `yaml:"precision" json:"precision"` // bisection stops when (fail − pass) ÷ fail ≤ this
	MaxProbes int     `yaml:"max_probes" json:"max_probes"`
	// MaxDriverLag is the probe's own driver check: a p99 send lag above
	// it makes the probe driver-bound.
	MaxDriverLag time.Duration    `yaml:"max_driver_lag" json:"max_driver_lag"`
	SLO          SLO              `yaml:"slo" json:"slo"`
	LLM          traffic.LLMShape `yaml:"llm" json:"llm"`
	// Stack is the embedded pool at its first size; engines added for a
	// scale have the same profile and slots.
	Stack traffic.Pool `yaml:"stack" json:"stack"`
	// Targeting is the q4.target block.
	workload.Targeting `yaml:",inline" json:",inline"`
}

// SLO a probe must meet at p99, with at least MinSuccess of its requests
// succeeding.
type SLO struct {
	TTFT       time.Duration `yaml:"ttft" json:"ttft"`
	E2E        time.Duration `yaml:"e2e" json:"e2e"`
	MinSuccess float64       `yaml:"min_success" json:"min_success"`
}

// Default: full scales 1, 2, 4 of engines with 8 slots, 10 s probes, up
// to 10 per scale, 10 % precision; quick scales 1, 2 with 2 slots and
// short chats, 2 s probes, up to 5 per scale (≤ 20 s of traffic).
func Default(quick bool) *Config {
	c := &Config{
		Scales: []int{1, 2, 4}, Probe: 10 * time.Second, StartRate: 4, Growth: 2, Precision: 0.1, MaxProbes: 10,
		MaxDriverLag: 100 * time.Millisecond,
		SLO:          SLO{TTFT: time.Second, E2E: 5 * time.Second, MinSuccess: 0.99},
		LLM:          traffic.LLMShape{Model: "meta-llama/Llama-3.1-8B-Instruct", Shape: shape.Of(256, 128), Stream: true},
		Stack:        traffic.Pool{LLMEngines: 1, LLMSlots: 8, Profile: "llama3.1-8b-h100"},
	}
	if quick {
		c.Scales, c.Probe, c.MaxProbes, c.Precision = []int{1, 2}, 2*time.Second, 5, 0.25
		c.SLO.TTFT, c.SLO.E2E = 500*time.Millisecond, 2*time.Second
		c.LLM.Shape = shape.Of(64, 32)
		c.Stack.LLMSlots = 2
	}
	return c
}

// Validate reports the first problem, naming the q4 key.
func (c *Config) Validate() error {
	if len(c.Scales) == 0 {
		return errors.New("q4.scales is empty; list engine counts such as [1, 2, 4]")
	}
	for _, n := range c.Scales {
		if n < 1 || n > 64 {
			return fmt.Errorf("q4.scales: %d engines; each scale must be in [1, 64]", n)
		}
	}
	switch {
	case c.Probe < 100*time.Millisecond:
		return fmt.Errorf("q4.probe %v: must be ≥ 100ms", c.Probe)
	case !(c.StartRate > 0) || c.StartRate > 1e5:
		return fmt.Errorf("q4.start_rate %v: must be in (0, 100000] req/s", c.StartRate)
	case !(c.Growth > 1) || math.IsInf(c.Growth, 0):
		return fmt.Errorf("q4.growth %v: must be > 1", c.Growth)
	case !(c.Precision > 0) || c.Precision >= 1:
		return fmt.Errorf("q4.precision %v: must be in (0, 1)", c.Precision)
	case c.MaxProbes < 2:
		return fmt.Errorf("q4.max_probes %d: must be ≥ 2", c.MaxProbes)
	case c.MaxDriverLag <= 0:
		return errors.New("q4.max_driver_lag must be > 0")
	case !(c.SLO.MinSuccess >= 0 && c.SLO.MinSuccess <= 1):
		return fmt.Errorf("q4.slo.min_success %v: must be in [0,1]", c.SLO.MinSuccess)
	case !traffic.SLOBoundOK(c.SLO.TTFT) || !traffic.SLOBoundOK(c.SLO.E2E):
		return fmt.Errorf("q4.slo: bounds must be between 0 (no bound) and %v", protocol.MaxDeadline)
	case c.LLM.Validate("q4.llm") != nil:
		return c.LLM.Validate("q4.llm")
	}
	if err := c.Target.Validate("q4.target", workload.TargetDefs(defs...)); err != nil {
		return err
	}
	return c.Stack.Validate("q4.stack")
}

// Override: --rate sets start_rate, --duration the probe length;
// --total-requests and --llm-ratio do not apply.
func (c *Config) Override(o workload.Overrides) []string {
	if o.Rate != nil {
		c.StartRate = *o.Rate
	}
	if o.Duration != nil {
		c.Probe = *o.Duration
	}
	return o.Unused("total-requests", "llm-ratio")
}

// q4 is Q4 ScaleFrontier.
type q4 struct{ cfg *Config }

func (q *q4) Config() workload.Config { return q.cfg }

// StackYAML is the pool with the first scale's engines.
func (q *q4) StackYAML() []byte {
	p := q.cfg.Stack
	p.LLMEngines = q.cfg.Scales[0]
	return p.YAML(protocol.PolicyFIFO)
}
