// Package q3 is Q3 NoisyNeighbor (entry isolation): a victim tenant sends
// interactive chat at a steady rate, first alone, then beside an
// aggressor tenant whose batch load ramps past the pool's capacity; the
// pair of sub-runs repeats under each policy (fifo, then fair_share with
// the stack's per-tenant quotas). It measures how much the aggressor
// hurts the victim (its SLO attainment beside the aggressor against
// alone, and the ratio of its p99 TTFTs, a failed request counting as
// +∞ so that a starved victim never looks fast), how fairly the pool
// shares itself (Jain's index over each tenant's goodput ÷ its max-min
// fair share) and what the quotas turn away (the aggressor's 429s).
//
// Pipeline: Plan/Run draw the victim's Poisson stream and the
// aggressor's ramp from the seed; per policy the alone phase sends the
// victim's stream, the contended phase both merged (traffic.Merge);
// outcome folds the records per tenant and policy.
package q3

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Spec is Q3's catalog entry.
func Spec() workload.Spec {
	return workload.Spec{
		ID: "Q3", Name: "NoisyNeighbor", Entry: "isolation", PhaseLabel: "phase", ShardedLoad: true,
		Description: "an interactive victim tenant alone, then beside an aggressor whose batch load ramps past capacity, under fifo and fair_share with quotas; primary: the victim's SLO attainment beside the aggressor (against alone), with the ratio of its p99 TTFTs (failed requests as +∞)",
		New:         func(quick bool) workload.Workload { return &q3{cfg: Default(quick)} },
		Primary:     defVictimSLO,
		Figure:      workload.Figure{Recipe: workload.FigureIsolation, Table: TableIsolation},
	}
}

// Config configures Q3 NoisyNeighbor (config section q3).
type Config struct {
	Victim    Victim    `yaml:"victim" json:"victim"`
	Aggressor Aggressor `yaml:"aggressor" json:"aggressor"`
	// Alone and Contended are the lengths of the two phases of a policy.
	Alone     time.Duration    `yaml:"alone" json:"alone"`
	Contended time.Duration    `yaml:"contended" json:"contended"`
	Policies  []string         `yaml:"policies" json:"policies"`
	LLM       traffic.LLMShape `yaml:"llm" json:"llm"`
	// SLO of the victim's requests (TTFT and E2E, 0: no bound); the
	// aggressor's count as met when they succeed.
	SLO   SLO          `yaml:"slo" json:"slo"`
	Stack traffic.Pool `yaml:"stack" json:"stack"`
	// Targeting is the q3.target block.
	workload.Targeting `yaml:",inline" json:",inline"`
}

// Victim is the interactive tenant: Poisson at Rate.
type Victim struct {
	Tenant   string  `yaml:"tenant" json:"tenant"`
	Rate     float64 `yaml:"rate" json:"rate"`
	Priority string  `yaml:"priority" json:"priority"`
	// LLM, when set, gives the victim its own input_tokens and
	// output_tokens (default: the llm block's).
	LLM *shape.Shape `yaml:"llm,omitempty" json:"llm,omitempty"`
}

// Aggressor is the batch tenant: a ramp from Rate to RampTo over the
// contended phase. MaxConcurrent is its quota on the embedded stack
// (queued + running; 0: none) and Weight its fair_share weight.
type Aggressor struct {
	Tenant        string  `yaml:"tenant" json:"tenant"`
	Rate          float64 `yaml:"rate" json:"rate"`
	RampTo        float64 `yaml:"ramp_to" json:"ramp_to"`
	Priority      string  `yaml:"priority" json:"priority"`
	MaxConcurrent int     `yaml:"max_concurrent" json:"max_concurrent"`
	// LLM, when set, gives the aggressor its own lengths (batch work
	// often has longer prompts and outputs).
	LLM *shape.Shape `yaml:"llm,omitempty" json:"llm,omitempty"`
}

// SLO bounds of the victim's chats.
type SLO struct {
	TTFT time.Duration `yaml:"ttft" json:"ttft"`
	E2E  time.Duration `yaml:"e2e" json:"e2e"`
}

// Default: full victim 4 req/s, 30 s alone then 60 s beside an
// aggressor ramping 2 → 40 req/s on 2 engines × 8 slots (capacity about
// 19 chats/s); quick victim 5 req/s, 5 s alone, 8 s beside 2 → 30 req/s
// on 1 engine × 4 slots (about 18 chats/s of 32 tokens): 26 s of traffic.
func Default(quick bool) *Config {
	c := &Config{
		Victim:    Victim{Tenant: "victim", Rate: 4, Priority: protocol.PriorityNormal},
		Aggressor: Aggressor{Tenant: "aggressor", Rate: 2, RampTo: 40, Priority: protocol.PriorityNormal, MaxConcurrent: 48},
		Alone:     30 * time.Second, Contended: 60 * time.Second,
		Policies: []string{protocol.PolicyFIFO, protocol.PolicyFairShare},
		LLM:      traffic.LLMShape{Model: "meta-llama/Llama-3.1-8B-Instruct", Shape: shape.Of(256, 128), Stream: true},
		SLO:      SLO{TTFT: time.Second, E2E: 5 * time.Second},
		Stack:    traffic.Pool{LLMEngines: 2, LLMSlots: 8, Profile: "llama3.1-8b-h100"},
	}
	if quick {
		c.Victim.Rate, c.Aggressor.RampTo, c.Aggressor.MaxConcurrent = 5, 30, 12
		c.Alone, c.Contended = 5*time.Second, 8*time.Second
		c.LLM.Shape = shape.Of(64, 32)
		c.SLO = SLO{TTFT: 500 * time.Millisecond, E2E: 2 * time.Second}
		c.Stack.LLMEngines, c.Stack.LLMSlots = 1, 4
	}
	return c
}

// Validate reports the first problem, naming the q3 key.
func (c *Config) Validate() error {
	v, a := c.Victim, c.Aggressor
	switch {
	case v.Tenant == "" || a.Tenant == "" || v.Tenant == a.Tenant:
		return errors.New("q3.victim.tenant and q3.aggressor.tenant must be set and differ")
	case !(v.Rate > 0) || v.Rate > 1e5:
		return fmt.Errorf("q3.victim.rate %v: must be in (0, 100000] req/s", v.Rate)
	case !(a.Rate > 0) || !(a.RampTo > 0) || a.Rate > 1e5 || a.RampTo > 1e5:
		return errors.New("q3.aggressor.rate and ramp_to must be in (0, 100000] req/s")
	case !slices.Contains(protocol.Priorities(), v.Priority) || !slices.Contains(protocol.Priorities(), a.Priority):
		return fmt.Errorf("q3.victim.priority, q3.aggressor.priority: use %s", strings.Join(protocol.Priorities(), ", "))
	case a.MaxConcurrent < 0:
		return errors.New("q3.aggressor.max_concurrent must be ≥ 0 (0 = no quota)")
	case c.Alone <= 0 || c.Contended <= 0:
		return errors.New("q3.alone and q3.contended must be > 0")
	case c.LLM.Validate("q3.llm") != nil:
		return c.LLM.Validate("q3.llm")
	case c.LLM.ValidateClass("q3.victim.llm", c.Victim.LLM) != nil:
		return c.LLM.ValidateClass("q3.victim.llm", c.Victim.LLM)
	case c.LLM.ValidateClass("q3.aggressor.llm", c.Aggressor.LLM) != nil:
		return c.LLM.ValidateClass("q3.aggressor.llm", c.Aggressor.LLM)
	case !traffic.SLOBoundOK(c.SLO.TTFT) || !traffic.SLOBoundOK(c.SLO.E2E):
		return fmt.Errorf("q3.slo: bounds must be between 0 (no bound) and %v", protocol.MaxDeadline)
	}
	if err := traffic.ValidatePolicies("q3.policies", c.Policies); err != nil {
		return err
	}
	if err := c.Target.Validate("q3.target", workload.TargetDefs(defs...)); err != nil {
		return err
	}
	return c.Stack.Validate("q3.stack")
}

// Override: --rate sets the victim's rate, --duration the contended
// phase; --total-requests and --llm-ratio do not apply.
func (c *Config) Override(o workload.Overrides) []string {
	if o.Rate != nil {
		c.Victim.Rate = *o.Rate
	}
	if o.Duration != nil {
		c.Contended = *o.Duration
	}
	return o.Unused("total-requests", "llm-ratio")
}

// q3 is Q3 NoisyNeighbor.
type q3 struct{ cfg *Config }

func (q *q3) Config() workload.Config { return q.cfg }

// StackOnlyKeys are the keys that configure the embedded stack only.
func (c *Config) StackOnlyKeys() []string { return []string{"q3.stack", "q3.aggressor.max_concurrent"} }

// StackYAML is the pool with the aggressor's quota.
func (q *q3) StackYAML() []byte {
	b := q.cfg.Stack.YAML(protocol.PolicyFIFO)
	if a := q.cfg.Aggressor; a.MaxConcurrent > 0 {
		b = fmt.Appendf(b, "quotas:\n  tenants:\n    %q: {max_concurrent: %d}\n", a.Tenant, a.MaxConcurrent)
	}
	return b
}
