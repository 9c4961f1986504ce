package q2

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Spec is Q2's catalog entry.
func Spec() workload.Spec {
	return workload.Spec{
		ID: "Q2", Name: "ControlMix", Entry: "control_plane", PhaseLabel: "policy",
		Description: "LLM and embedding requests mixed through one gateway (llm_ratio 0.7), Poisson, once per scheduling policy; primary: goodput at per-type SLOs",
		New:         func(quick bool) workload.Workload { return &q2{cfg: Default(quick)} },
	}
}

// Config configures Q2 ControlMix (config section q2).
type Config struct {
	// Schedule of each policy's sub-run; the same arrivals for every policy.
	Schedule load.ScheduleConfig `yaml:"schedule" json:"schedule"`
	// LLMRatio is the fraction of chat completions; the rest are embeddings.
	LLMRatio float64 `yaml:"llm_ratio" json:"llm_ratio"`
	// Policies are run one after the other, switched via /admin/policy.
	Policies []string `yaml:"policies" json:"policies"`
	// Tenants and Priorities are drawn per request with these weights.
	Tenants    []traffic.Weighted `yaml:"tenants" json:"tenants"`
	Priorities []traffic.Weighted `yaml:"priorities" json:"priorities"`
	LLM        traffic.LLMShape   `yaml:"llm" json:"llm"`
	Embedding  traffic.EmbedShape `yaml:"embedding" json:"embedding"`
	SLO        SLO                `yaml:"slo" json:"slo"`
	// MaxInFlight caps concurrent requests (0: unlimited; when it binds the
	// schedule lag shows it and the run may be invalid).
	MaxInFlight int `yaml:"max_in_flight" json:"max_in_flight"`
}

// SLO are the per-type service-level objectives. A request meets its SLO
// when it succeeded and each bound set (> 0) holds; TTFT and E2E count
// from the intended send.
type SLO struct {
	LLMTTFT      time.Duration `yaml:"llm_ttft" json:"llm_ttft"`
	LLME2E       time.Duration `yaml:"llm_e2e" json:"llm_e2e"`
	EmbeddingE2E time.Duration `yaml:"embedding_e2e" json:"embedding_e2e"`
}

// Default returns Q2's defaults: full scale 1,000 requests at 50 req/s
// per policy; quick 100 at 20 req/s with shorter prompts and outputs.
func Default(quick bool) *Config {
	c := &Config{
		Schedule: load.ScheduleConfig{Process: load.ProcessPoisson, Rate: 50, Count: 1000},
		LLMRatio: 0.7,
		Policies: []string{protocol.PolicyFIFO, protocol.PolicyPriority, protocol.PolicySLOAware, protocol.PolicyHybrid},
		Tenants:  []traffic.Weighted{{Name: "tenant-a", Weight: 0.5}, {Name: "tenant-b", Weight: 0.3}, {Name: "tenant-c", Weight: 0.2}},
		Priorities: []traffic.Weighted{{Name: "critical", Weight: 0.05}, {Name: "high", Weight: 0.15}, {Name: "normal", Weight: 0.6},
			{Name: "low", Weight: 0.15}, {Name: "background", Weight: 0.05}},
		LLM:       traffic.LLMShape{Model: "meta-llama/Llama-3.1-8B-Instruct", MaxTokens: 128, PromptWords: 256, Stream: true},
		Embedding: traffic.EmbedShape{Model: "BAAI/bge-small-en-v1.5", Inputs: 4, Words: 64},
		SLO:       SLO{LLMTTFT: 500 * time.Millisecond, LLME2E: 5 * time.Second, EmbeddingE2E: 200 * time.Millisecond},
	}
	if quick {
		c.Schedule.Rate, c.Schedule.Count = 20, 100
		c.LLM.MaxTokens, c.LLM.PromptWords = 32, 64
		c.Embedding.Inputs, c.Embedding.Words = 2, 32
	}
	return c
}

// Validate reports the first problem, naming the q2 key.
func (c *Config) Validate() error {
	if err := c.Schedule.Validate(); err != nil {
		return fmt.Errorf("q2.%w", err)
	}
	if math.IsNaN(c.LLMRatio) || c.LLMRatio < 0 || c.LLMRatio > 1 {
		return fmt.Errorf("q2.llm_ratio %v: must be in [0,1]", c.LLMRatio)
	}
	if len(c.Policies) == 0 {
		return errors.New("q2.policies is empty; list at least one of " + strings.Join(protocol.Policies(), ", "))
	}
	for _, p := range c.Policies {
		if !slices.Contains(protocol.Policies(), p) {
			return fmt.Errorf("q2.policies: unknown policy %q; use %s", p, strings.Join(protocol.Policies(), ", "))
		}
	}
	if err := traffic.ValidateWeights("q2.tenants", c.Tenants, nil); err != nil {
		return err
	}
	if err := traffic.ValidateWeights("q2.priorities", c.Priorities, protocol.Priorities()); err != nil {
		return err
	}
	return c.validateShapes()
}

func (c *Config) validateShapes() error {
	switch {
	case c.LLMRatio > 0 && (c.LLM.Model == "" || c.LLM.MaxTokens < 1 || c.LLM.PromptWords < 1):
		return errors.New("q2.llm: model must be set and max_tokens, prompt_words ≥ 1")
	case c.LLMRatio < 1 && (c.Embedding.Model == "" || c.Embedding.Inputs < 1 || c.Embedding.Words < 1):
		return errors.New("q2.embedding: model must be set and inputs, words ≥ 1")
	case !traffic.SLOBoundOK(c.SLO.LLMTTFT) || !traffic.SLOBoundOK(c.SLO.LLME2E) || !traffic.SLOBoundOK(c.SLO.EmbeddingE2E):
		return fmt.Errorf("q2.slo: bounds must be between 0 (no bound) and %v (the X-SLO-Deadline-Ms limit)", protocol.MaxDeadline)
	case c.MaxInFlight < 0:
		return errors.New("q2.max_in_flight must be ≥ 0 (0 = unlimited)")
	}
	return nil
}

// Override applies --rate, --total-requests, --duration and --llm-ratio.
// --duration without --total-requests lets the duration end the schedule.
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

func (c *Config) Override(o workload.Overrides) []string {
	o.ApplySchedule(&c.Schedule)
	if o.LLMRatio != nil {
		c.LLMRatio = *o.LLMRatio
	}
	return nil
}
