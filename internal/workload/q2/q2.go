package q2

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Spec is Q2's catalog entry.
func Spec() workload.Spec {
	return workload.Spec{
		ID: "Q2", Name: "ControlMix", Entry: "control_plane", PhaseLabel: "policy",
		Description: "LLM and embedding requests of three classes (critical, normal, background) through one gateway sized to queue, Poisson at ~1.3× its LLM capacity, per scheduling policy in interleaved rounds; primary: the critical class's p99 TTFT under the best policy, against fifo",
		New:         func(quick bool) workload.Workload { return &q2{cfg: Default(quick)} },
		Primary:     defBestCritTTFT,
		Figure:      workload.Figure{Recipe: workload.FigurePolicies, Table: TablePolicies},
		Files:       []string{fileQueue},
	}
}

// Config configures Q2 ControlMix (config section q2).
type Config struct {
	// Schedule of each sub-run (one policy, one round); the same arrivals
	// for every policy of a round.
	Schedule load.ScheduleConfig `yaml:"schedule" json:"schedule"`
	// Rounds repeats the policies, interleaved (fifo, priority, …, fifo,
	// …), each round with its own arrivals: every round is one sample of
	// each policy in bench.txt, so repetitions × rounds feed compare.
	Rounds int `yaml:"rounds" json:"rounds"`
	// LLMRatio is the fraction of chat completions; the rest are embeddings.
	LLMRatio float64 `yaml:"llm_ratio" json:"llm_ratio"`
	// Policies are run one after the other, switched via /admin/policy.
	Policies []string `yaml:"policies" json:"policies"`
	// Tenants are drawn per request with these weights.
	Tenants []traffic.Weighted `yaml:"tenants" json:"tenants"`
	// Classes are the request classes: a priority drawn with its weight,
	// and its SLO, which is also the deadline the request carries.
	Classes   []Class            `yaml:"classes" json:"classes"`
	LLM       traffic.LLMShape   `yaml:"llm" json:"llm"`
	Embedding traffic.EmbedShape `yaml:"embedding" json:"embedding"`
	// MaxInFlight caps concurrent requests (0: unlimited; when it binds the
	// schedule lag shows it and the run may be invalid).
	MaxInFlight int `yaml:"max_in_flight" json:"max_in_flight"`
	// Stack sizes the embedded reference stack so that its gateway queues.
	Stack traffic.Pool `yaml:"stack" json:"stack"`
	// QueueMetric is where the queue depth comes from when the target
	// sends no X-Sagebench-Queue-Us: a gauge of its /metrics.
	QueueMetric QueueMetric `yaml:"queue_metric,omitempty" json:"queue_metric,omitzero"`
	// Targeting is the q2.target block.
	workload.Targeting `yaml:",inline" json:",inline"`
}

// Class is a request class: its priority, its share of the requests and
// its SLO.
type Class struct {
	Priority string  `yaml:"priority" json:"priority"`
	Weight   float64 `yaml:"weight" json:"weight"`
	SLO      SLO     `yaml:"slo" json:"slo"`
	// LLM, when set, gives the class its own input_tokens and
	// output_tokens (default: the llm block's).
	LLM *shape.Shape `yaml:"llm,omitempty" json:"llm,omitempty"`
}

// SLO are a class's service-level objectives. A request meets its SLO
// when it succeeded and each bound set (> 0) holds; TTFT and E2E count
// from the intended send. The E2E bound of the request's type is sent as
// its deadline (X-SLO-Deadline-Ms), which slo_aware orders by.
type SLO struct {
	LLMTTFT      time.Duration `yaml:"llm_ttft" json:"llm_ttft"`
	LLME2E       time.Duration `yaml:"llm_e2e" json:"llm_e2e"`
	EmbeddingE2E time.Duration `yaml:"embedding_e2e" json:"embedding_e2e"`
}

// Default returns Q2's defaults. Full: 2 engines × 8 slots, 450 requests
// at 30 req/s per sub-run, 2 rounds of 4 policies (about 2 min); quick: 1
// engine × 3 slots, 150 at 26 req/s, 1 round (about 25 s). Both offer
// about 1.3× the LLM capacity.
func Default(quick bool) *Config {
	c := &Config{
		Schedule: load.ScheduleConfig{Process: load.ProcessPoisson, Rate: 30, Count: 450},
		Rounds:   2,
		LLMRatio: 0.7,
		Policies: []string{protocol.PolicyFIFO, protocol.PolicyPriority, protocol.PolicySLOAware, protocol.PolicyFairShare},
		Tenants:  []traffic.Weighted{{Name: "tenant-a", Weight: 0.5}, {Name: "tenant-b", Weight: 0.3}, {Name: "tenant-c", Weight: 0.2}},
		Classes: []Class{
			{Priority: protocol.PriorityCritical, Weight: 0.1, SLO: SLO{LLMTTFT: 500 * time.Millisecond, LLME2E: 3 * time.Second, EmbeddingE2E: 200 * time.Millisecond}},
			{Priority: protocol.PriorityNormal, Weight: 0.6, SLO: SLO{LLMTTFT: 2 * time.Second, LLME2E: 10 * time.Second, EmbeddingE2E: time.Second}},
			{Priority: protocol.PriorityBackground, Weight: 0.3, SLO: SLO{LLME2E: 30 * time.Second, EmbeddingE2E: 5 * time.Second}},
		},
		LLM:       traffic.LLMShape{Model: "meta-llama/Llama-3.1-8B-Instruct", Shape: shape.Of(256, 128), Stream: true},
		Embedding: traffic.EmbedShape{Model: "BAAI/bge-small-en-v1.5", Inputs: 4, Words: 64},
		Stack:     traffic.Pool{LLMEngines: 2, LLMSlots: 8, Profile: "llama3.1-8b-h100"},
	}
	if quick {
		c.Schedule.Rate, c.Schedule.Count, c.Rounds = 26, 150, 1
		c.LLM.Shape = shape.Of(64, 32)
		c.Embedding.Inputs, c.Embedding.Words = 2, 32
		c.Stack.LLMEngines, c.Stack.LLMSlots = 1, 3
	}
	return c
}

// StackOnlyKeys are the keys that configure the embedded stack only.
func (c *Config) StackOnlyKeys() []string { return []string{"q2.stack"} }

// StackYAML is Q2's embedded pool (Config.Stack), starting under fifo.
func (q *q2) StackYAML() []byte { return q.cfg.Stack.YAML(protocol.PolicyFIFO) }

// class returns the class of priority (the zero Class when unknown).
func (c *Config) class(priority string) Class {
	for _, k := range c.Classes {
		if k.Priority == priority {
			return k
		}
	}
	return Class{}
}

// priorities are the classes as weighted priorities.
func (c *Config) priorities() []traffic.Weighted {
	ws := make([]traffic.Weighted, len(c.Classes))
	for i, k := range c.Classes {
		ws[i] = traffic.Weighted{Name: k.Priority, Weight: k.Weight}
	}
	return ws
}

// Validate reports the first problem, naming the q2 key.
func (c *Config) Validate() error {
	if err := c.Schedule.Validate(); err != nil {
		return fmt.Errorf("q2.%w", err)
	}
	if math.IsNaN(c.LLMRatio) || c.LLMRatio < 0 || c.LLMRatio > 1 {
		return fmt.Errorf("q2.llm_ratio %v: must be in [0,1]", c.LLMRatio)
	}
	if err := traffic.ValidatePolicies("q2.policies", c.Policies); err != nil {
		return err
	}
	if err := c.Target.Validate("q2.target", workload.TargetDefs(defs...)); err != nil {
		return err
	}
	if err := traffic.ValidateWeights("q2.tenants", c.Tenants, nil); err != nil {
		return err
	}
	if err := traffic.ValidateWeights("q2.classes", c.priorities(), protocol.Priorities()); err != nil {
		return err
	}
	if c.Rounds < 1 {
		return fmt.Errorf("q2.rounds %d: must be ≥ 1", c.Rounds)
	}
	if err := c.Stack.Validate("q2.stack"); err != nil {
		return err
	}
	if err := c.QueueMetric.Validate(); err != nil {
		return err
	}
	return c.validateShapes()
}

func (c *Config) validateShapes() error {
	switch {
	case c.LLMRatio > 0 && c.LLM.Validate("q2.llm") != nil:
		return c.LLM.Validate("q2.llm")
	case c.LLMRatio < 1 && c.Embedding.Validate("q2.embedding") != nil:
		return c.Embedding.Validate("q2.embedding")
	case c.MaxInFlight < 0:
		return errors.New("q2.max_in_flight must be ≥ 0 (0 = unlimited)")
	}
	for _, k := range c.Classes {
		if err := c.LLM.ValidateClass("q2.classes."+k.Priority+".llm", k.LLM); c.LLMRatio > 0 && err != nil {
			return err
		}
		if !traffic.SLOBoundOK(k.SLO.LLMTTFT) || !traffic.SLOBoundOK(k.SLO.LLME2E) || !traffic.SLOBoundOK(k.SLO.EmbeddingE2E) {
			return fmt.Errorf("q2.classes: %s slo bounds must be between 0 (no bound) and %v (the X-SLO-Deadline-Ms limit)", k.Priority, protocol.MaxDeadline)
		}
	}
	return nil
}

// Models lists the models the mix sends to: the LLM's when llm_ratio > 0,
// the embedding model's when llm_ratio < 1.
func (c *Config) Models() []string {
	var out []string
	if c.LLMRatio > 0 {
		out = append(out, c.LLM.Model)
	}
	if c.LLMRatio < 1 {
		out = append(out, c.Embedding.Model)
	}
	return out
}

// ChatModels lists the chat model when the mix has chat requests.
func (c *Config) ChatModels() []string {
	if c.LLMRatio > 0 {
		return []string{c.LLM.Model}
	}
	return nil
}

// Override applies --rate, --total-requests, --duration and --llm-ratio.
// --duration without --total-requests lets the duration end the schedule.
func (c *Config) Override(o workload.Overrides) []string {
	o.ApplySchedule(&c.Schedule)
	if o.LLMRatio != nil {
		c.LLMRatio = *o.LLMRatio
	}
	return nil
}
