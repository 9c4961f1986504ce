// Package q6 is Q6 BurstTown (entry burst_priority): a base load with
// periodic bursts far above the pool's capacity, 20 % of it high
// priority, run once per scheduling policy. It measures whether the
// policy keeps high-priority requests inside their SLO during bursts,
// what that costs the low-priority ones, how often a later low-priority
// request overtakes a waiting high-priority one (beyond a tie tolerance
// τ), and how fast latency returns to its bound after each burst.
//
// Pipeline: Plan/Run build one onoff schedule and one drawn mix per
// repetition; each policy replays them on the embedded pool (sized by
// StackYAML) after POST /admin/policy; outcome cuts the records into
// burst, drain (until as few requests wait for a first token as before
// the burst) and base windows, counts priority inversions, and reads
// each burst's recovery — not violated, recovered after t, or never —
// off the windows of internal/series.
package q6

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Spec is Q6's catalog entry.
func Spec() workload.Spec {
	return workload.Spec{
		ID: "Q6", Name: "BurstTown", Entry: "burst_priority", PhaseLabel: "policy", ShardedLoad: true,
		Description: "base load with periodic bursts far above capacity, 20 % high priority, once per policy (fifo, priority, slo_aware); primary: high-priority SLO attainment inside bursts",
		New:         func(quick bool) workload.Workload { return &q6{cfg: Default(quick)} },
		Primary:     defHighBurst,
		Figure:      workload.Figure{Recipe: workload.FigureBursts, Table: TableWindows},
	}
}

// Config configures Q6 BurstTown (config section q6).
type Config struct {
	// Schedule is an onoff schedule: rate is the base, burst_rate the
	// burst, burst_length at the start of every burst_period.
	Schedule  load.ScheduleConfig `yaml:"schedule" json:"schedule"`
	Policies  []string            `yaml:"policies" json:"policies"`
	HighShare float64             `yaml:"high_share" json:"high_share"` // fraction sent as priority high; the rest low
	LLM       traffic.LLMShape    `yaml:"llm" json:"llm"`
	// HighLLM and LowLLM, when set, give a class its own input_tokens
	// and output_tokens (default: the llm block's).
	HighLLM *shape.Shape `yaml:"high_llm,omitempty" json:"high_llm,omitempty"`
	LowLLM  *shape.Shape `yaml:"low_llm,omitempty" json:"low_llm,omitempty"`
	High    SLO          `yaml:"high_slo" json:"high_slo"`
	Low     SLO          `yaml:"low_slo" json:"low_slo"`
	// Series windows the records for the recovery after each burst: the
	// TTFT p99 of the high-priority requests back within high_slo.ttft
	// for Hold.
	Series series.Config `yaml:"series" json:"series"`
	Hold   time.Duration `yaml:"hold" json:"hold"`
	// InversionTau is the tie tolerance of a priority inversion: sends or
	// first tokens within it of each other are ties, not an order.
	InversionTau time.Duration `yaml:"inversion_tau" json:"inversion_tau"`
	Stack        traffic.Pool  `yaml:"stack" json:"stack"`
	MaxInFlight  int           `yaml:"max_in_flight" json:"max_in_flight"`
	// Targeting is the q6.target block.
	workload.Targeting `yaml:",inline" json:",inline"`
}

// SLO of a class: TTFT and E2E bounds (0: none); the E2E bound is the
// request's deadline.
type SLO struct {
	TTFT time.Duration `yaml:"ttft" json:"ttft"`
	E2E  time.Duration `yaml:"e2e" json:"e2e"`
}

// Default: full 10 req/s base, 200 req/s bursts of 5 s every 30 s for
// 90 s per policy on 2 engines × 16 slots; quick the same shape scaled
// down: 4 req/s base, 32 req/s bursts of 1 s every 5 s, 10 s per policy
// on 1 engine × 4 slots (30 s of traffic).
func Default(quick bool) *Config {
	c := &Config{
		Schedule: load.ScheduleConfig{Process: load.ProcessOnOff, Rate: 10, BurstRate: 200,
			BurstLength: 5 * time.Second, BurstPeriod: 30 * time.Second, Duration: 90 * time.Second},
		Policies:  []string{protocol.PolicyFIFO, protocol.PolicyPriority, protocol.PolicySLOAware},
		HighShare: 0.2,
		LLM:       traffic.LLMShape{Model: "meta-llama/Llama-3.1-8B-Instruct", Shape: shape.Of(128, 64), Stream: true},
		High:      SLO{TTFT: time.Second, E2E: 3 * time.Second},
		Low:       SLO{TTFT: 5 * time.Second, E2E: 15 * time.Second},
		Series:    series.Config{Width: 2 * time.Second, Step: 500 * time.Millisecond},
		Hold:      4 * time.Second, InversionTau: time.Millisecond,
		Stack: traffic.Pool{LLMEngines: 2, LLMSlots: 16, Profile: "llama3.1-8b-h100"},
	}
	if quick {
		c.Schedule.Rate, c.Schedule.BurstRate = 4, 32
		c.Schedule.BurstLength, c.Schedule.BurstPeriod, c.Schedule.Duration = time.Second, 5*time.Second, 10*time.Second
		c.LLM.Shape = shape.Of(64, 32)
		c.High, c.Low = SLO{TTFT: 500 * time.Millisecond, E2E: 2 * time.Second}, SLO{TTFT: 2 * time.Second, E2E: 8 * time.Second}
		c.Series, c.Hold = series.Config{Width: time.Second, Step: 250 * time.Millisecond}, time.Second
		c.Stack.LLMEngines, c.Stack.LLMSlots = 1, 4
	}
	return c
}

// Validate reports the first problem, naming the q6 key.
func (c *Config) Validate() error {
	if err := c.Schedule.Validate(); err != nil {
		return fmt.Errorf("q6.%w", err)
	}
	switch {
	case c.Schedule.Process != load.ProcessOnOff:
		return fmt.Errorf("q6.schedule.process %q: Q6 needs onoff (base rate, burst_rate, burst_length, burst_period)", c.Schedule.Process)
	case math.IsNaN(c.HighShare) || c.HighShare < 0 || c.HighShare > 1:
		return fmt.Errorf("q6.high_share %v: must be in [0,1]", c.HighShare)
	case c.LLM.Validate("q6.llm") != nil:
		return c.LLM.Validate("q6.llm")
	case c.LLM.ValidateClass("q6.high_llm", c.HighLLM) != nil:
		return c.LLM.ValidateClass("q6.high_llm", c.HighLLM)
	case c.LLM.ValidateClass("q6.low_llm", c.LowLLM) != nil:
		return c.LLM.ValidateClass("q6.low_llm", c.LowLLM)
	case !traffic.SLOBoundOK(c.High.TTFT) || !traffic.SLOBoundOK(c.High.E2E) || !traffic.SLOBoundOK(c.Low.TTFT) || !traffic.SLOBoundOK(c.Low.E2E):
		return fmt.Errorf("q6.high_slo, q6.low_slo: bounds must be between 0 (no bound) and %v", protocol.MaxDeadline)
	case c.InversionTau < 0:
		return errors.New("q6.inversion_tau must be ≥ 0 (the tie tolerance of a priority inversion, e.g. 1ms)")
	case c.Hold <= 0:
		return errors.New("q6.hold must be > 0 (how long latency must stay within bound to count as recovered)")
	case c.MaxInFlight < 0:
		return errors.New("q6.max_in_flight must be ≥ 0 (0 = unlimited)")
	}
	if err := traffic.ValidatePolicies("q6.policies", c.Policies); err != nil {
		return err
	}
	if err := c.Series.Validate("q6.series"); err != nil {
		return err
	}
	if err := c.Target.Validate("q6.target", workload.TargetDefs(defs...)); err != nil {
		return err
	}
	return c.Stack.Validate("q6.stack")
}

// Override applies --rate (the base rate), --total-requests and
// --duration; --llm-ratio does not apply (every request is a chat).
func (c *Config) Override(o workload.Overrides) []string {
	o.ApplySchedule(&c.Schedule)
	return o.Unused("llm-ratio")
}

// q6 is Q6 BurstTown.
type q6 struct{ cfg *Config }

func (q *q6) Config() workload.Config { return q.cfg }

// StackOnlyKeys are the keys that configure the embedded stack only.
func (c *Config) StackOnlyKeys() []string { return []string{"q6.stack"} }

// StackYAML is the pool Q6 runs on.
func (q *q6) StackYAML() []byte { return q.cfg.Stack.YAML(protocol.PolicyFIFO) }

// slo returns the class SLO of a priority.
func (c *Config) slo(priority string) SLO {
	if priority == protocol.PriorityHigh {
		return c.High
	}
	return c.Low
}
