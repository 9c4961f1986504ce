// Package q4 is Q4 ScaleFrontier (entry scalability): for each pool size
// n in a list, the highest arrival rate the target sustains within its
// SLO, bracketed to a stated precision, and how that rate scales with n.
//
// Pipeline: per scale, the pool is resized (the engines admin API, or
// q4.scale_command); Search probes a rate, jumps to the target's slots ÷
// the measured service time, ramps until a probe fails and bisects until
// the bracket [highest pass, lowest failure] is within the precision;
// later scales start from the first's bracket × n ÷ n₁. Each probe is an
// open-loop trial (its own phase), long enough for a queue to build and
// for its quantile (failed requests counting as +∞), repeated and pooled
// when its verdict hangs on sampling; its own driver lag makes it
// "driver-bound at R", never a figure of the target. outcome turns the
// brackets into bound metrics and the efficiency into an interval. A
// target that cannot be resized is measured once, as n = 1.
package q4

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Spec is Q4's catalog entry.
func Spec() workload.Spec {
	return workload.Spec{
		ID: "Q4", Name: "ScaleFrontier", Entry: "scalability", PhaseLabel: "probe", ShardedLoad: true,
		Description: "highest arrival rate meeting the SLO (p99 TTFT and E2E, failures as +∞, ≥ 99 % success) for n = 1, 2, 4 engines, bracketed by bisection of open-loop probes (each ≥ 2 trials, judged pass / fail / undecided at 95 %) to 5 % (quick: p75, 15 %); primary: scaling efficiency rate(n) ÷ (n · rate(1)) with the interval the brackets allow",
		New:         func(quick bool) workload.Workload { return &q4{cfg: Default(quick)} },
		Primary:     defEfficiency,
		Figure:      workload.Figure{Recipe: workload.FigureFrontier, Table: TableFrontier},
		Files:       []string{fileScales},
	}
}

// Config configures Q4 ScaleFrontier (config section q4).
type Config struct {
	// Scales are the LLM engine counts to measure, in order.
	Scales []int `yaml:"scales" json:"scales"`
	// Probe is the shortest trial. A trial is lengthened to
	// service_multiple × the median service time measured at the lowest
	// passing rate (so a queue can build) and to the requests the judged
	// quantile needs (⌈1 ÷ (1 − quantile)⌉: 100 for the p99), up to
	// max_probe.
	Probe           time.Duration `yaml:"probe" json:"probe"`
	MaxProbe        time.Duration `yaml:"max_probe" json:"max_probe"`
	ServiceMultiple float64       `yaml:"service_multiple" json:"service_multiple"`
	// Arrivals of a trial: poisson (default) or constant.
	Arrivals string `yaml:"arrivals" json:"arrivals"`
	// StartRate is the first probe's rate at the first scale; later
	// scales start at n ÷ n₁ × the first scale's highest passing rate.
	StartRate float64 `yaml:"start_rate" json:"start_rate"`
	Growth    float64 `yaml:"growth" json:"growth"`         // largest ramp factor (> 1)
	Precision float64 `yaml:"precision" json:"precision"`   // the search stops when (fail − pass) ÷ fail ≤ this
	MaxProbes int     `yaml:"max_probes" json:"max_probes"` // trials per scale
	// Repeats is how many more trials a rate gets when its verdict hangs
	// on sampling (pooled with the first).
	Repeats int `yaml:"repeats" json:"repeats"`
	// MaxDriverLag is the probe's own driver check: a p99 send lag above
	// it makes the probe driver-bound.
	MaxDriverLag time.Duration    `yaml:"max_driver_lag" json:"max_driver_lag"`
	SLO          SLO              `yaml:"slo" json:"slo"`
	LLM          traffic.LLMShape `yaml:"llm" json:"llm"`
	// Stack is the embedded pool at its first size; engines added for a
	// scale have the same profile and slots.
	Stack traffic.Pool `yaml:"stack" json:"stack"`
	// ScaleCommand, when set, resizes the target for each scale instead
	// of the engines admin API: argv, with {n} replaced by the scale, run
	// without a shell; it must exit 0 within scale_timeout, then
	// scale_settle passes before the first probe.
	ScaleCommand []string      `yaml:"scale_command,omitempty" json:"scale_command,omitempty"`
	ScaleTimeout time.Duration `yaml:"scale_timeout" json:"scale_timeout"`
	ScaleSettle  time.Duration `yaml:"scale_settle" json:"scale_settle"`
	// Targeting is the q4.target block.
	workload.Targeting `yaml:",inline" json:",inline"`
}

// SLO a probe must meet at its quantile (TTFT and E2E, a failed request
// counting as +∞), with at least MinSuccess of its requests succeeding.
type SLO struct {
	Quantile   float64       `yaml:"quantile" json:"quantile"`
	TTFT       time.Duration `yaml:"ttft" json:"ttft"`
	E2E        time.Duration `yaml:"e2e" json:"e2e"`
	MinSuccess float64       `yaml:"min_success" json:"min_success"`
}

// Default: full scales 1, 2, 4 of engines with 8 slots, p99 judged,
// trials of ≥ 10 s (≥ 20 × the service time, ≥ 381 requests over two
// trials), 5 % precision; quick the same scales of 1-slot engines with
// 24-token chats, p75 judged (a pass at the p99 needs 381 requests, at
// the p75 12), trials of 2 s, 15 % precision, ≤ 9 trials a scale (≤ 54 s
// of traffic at worst).
func Default(quick bool) *Config {
	c := &Config{
		Scales: []int{1, 2, 4}, Probe: 10 * time.Second, MaxProbe: 2 * time.Minute, ServiceMultiple: 20, Arrivals: load.ProcessPoisson,
		StartRate: 4, Growth: 2, Precision: 0.05, MaxProbes: 12, Repeats: 1,
		MaxDriverLag: 100 * time.Millisecond,
		SLO:          SLO{Quantile: 0.99, TTFT: time.Second, E2E: 5 * time.Second, MinSuccess: 0.99},
		LLM:          traffic.LLMShape{Model: "meta-llama/Llama-3.1-8B-Instruct", Shape: shape.Of(256, 128), Stream: true},
		Stack:        traffic.Pool{LLMEngines: 1, LLMSlots: 8, Profile: "llama3.1-8b-h100"},
		ScaleTimeout: 5 * time.Minute,
	}
	if quick {
		// The p75: a probe of two 2 s trials at 4 req/s holds the 12
		// requests a pass at the p75 needs (a p90 needs 35: 4.4 s trials);
		// 9 trials a scale (4 probes) keep quick at ≤ 54 s of traffic.
		c.Probe, c.MaxProbe, c.MaxProbes, c.Precision = 2*time.Second, 2*time.Second, 9, 0.15
		c.SLO = SLO{Quantile: 0.75, TTFT: 300 * time.Millisecond, E2E: 2 * time.Second, MinSuccess: 0.99}
		c.LLM.Shape = shape.Of(64, 24)
		c.Stack.LLMSlots = 1
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
	case c.Probe < 100*time.Millisecond || c.MaxProbe < c.Probe:
		return fmt.Errorf("q4.probe %v, q4.max_probe %v: want 100ms ≤ probe ≤ max_probe", c.Probe, c.MaxProbe)
	case !(c.ServiceMultiple >= 0) || c.ServiceMultiple > 1000:
		return fmt.Errorf("q4.service_multiple %v: must be in [0, 1000]", c.ServiceMultiple)
	case c.Arrivals != load.ProcessPoisson && c.Arrivals != load.ProcessConstant:
		return fmt.Errorf("q4.arrivals %q: use poisson or constant", c.Arrivals)
	case !(c.StartRate > 0) || c.StartRate > 1e5:
		return fmt.Errorf("q4.start_rate %v: must be in (0, 100000] req/s", c.StartRate)
	case !(c.Growth > 1) || math.IsInf(c.Growth, 0):
		return fmt.Errorf("q4.growth %v: must be > 1", c.Growth)
	case !(c.Precision > 0) || c.Precision >= 1:
		return fmt.Errorf("q4.precision %v: must be in (0, 1)", c.Precision)
	case c.MaxProbes < 2:
		return fmt.Errorf("q4.max_probes %d: must be ≥ 2", c.MaxProbes)
	case c.Repeats < 0 || c.Repeats > 5:
		return fmt.Errorf("q4.repeats %d: must be in [0, 5]", c.Repeats)
	case !(c.SLO.Quantile >= 0.5 && c.SLO.Quantile <= 0.999):
		return fmt.Errorf("q4.slo.quantile %v: must be in [0.5, 0.999]", c.SLO.Quantile)
	case c.MaxDriverLag <= 0:
		return errors.New("q4.max_driver_lag must be > 0")
	case !(c.SLO.MinSuccess >= 0 && c.SLO.MinSuccess <= 1):
		return fmt.Errorf("q4.slo.min_success %v: must be in [0,1]", c.SLO.MinSuccess)
	case !traffic.SLOBoundOK(c.SLO.TTFT) || !traffic.SLOBoundOK(c.SLO.E2E):
		return fmt.Errorf("q4.slo: bounds must be between 0 (no bound) and %v", protocol.MaxDeadline)
	case c.LLM.Validate("q4.llm") != nil:
		return c.LLM.Validate("q4.llm")
	}
	if err := c.validateScaleCommand(); err != nil {
		return err
	}
	if err := c.Target.Validate("q4.target", workload.TargetDefs(defs...)); err != nil {
		return err
	}
	return c.Stack.Validate("q4.stack")
}

func (c *Config) validateScaleCommand() error {
	switch {
	case len(c.ScaleCommand) == 0:
		return nil
	case c.ScaleCommand[0] == "":
		return errors.New("q4.scale_command: the first element is the program to run")
	case !slices.ContainsFunc(c.ScaleCommand, func(a string) bool { return strings.Contains(a, "{n}") }):
		return errors.New("q4.scale_command: no argument holds {n}, the engine count to scale to")
	case c.ScaleTimeout <= 0 || c.ScaleSettle < 0:
		return errors.New("q4.scale_timeout must be > 0 and q4.scale_settle ≥ 0")
	}
	return nil
}

// StackOnlyKeys are the keys that configure the embedded stack only.
func (c *Config) StackOnlyKeys() []string { return []string{"q4.stack"} }

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
