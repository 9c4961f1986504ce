package workload

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/load"
)

// Policies the reference stack's gateway can switch to.
var knownPolicies = []string{"fifo", "priority", "slo_aware", "fair_share", "hybrid", "adaptive"}

// Priorities understood by the gateway (X-Request-Priority).
var knownPriorities = []string{"critical", "high", "normal", "low", "background"}

func q2Spec() Spec {
	return Spec{
		ID: "Q2", Name: "ControlMix", Entry: "control_plane", PhaseLabel: "policy",
		Description: "LLM and embedding requests mixed through one gateway (llm_ratio 0.7), Poisson, once per scheduling policy; primary: goodput at per-type SLOs",
		New:         func(quick bool) Workload { return &q2{cfg: DefaultQ2(quick)} },
	}
}

// Q2Config configures Q2 ControlMix (config section q2).
type Q2Config struct {
	// Schedule of each policy's sub-run; the same arrivals for every policy.
	Schedule load.ScheduleConfig `yaml:"schedule" json:"schedule"`
	// LLMRatio is the fraction of chat completions; the rest are embeddings.
	LLMRatio float64 `yaml:"llm_ratio" json:"llm_ratio"`
	// Policies are run one after the other, switched via /admin/policy.
	Policies []string `yaml:"policies" json:"policies"`
	// Tenants and Priorities are drawn per request with these weights.
	Tenants    []Weighted `yaml:"tenants" json:"tenants"`
	Priorities []Weighted `yaml:"priorities" json:"priorities"`
	LLM        LLMShape   `yaml:"llm" json:"llm"`
	Embedding  EmbedShape `yaml:"embedding" json:"embedding"`
	SLO        Q2SLO      `yaml:"slo" json:"slo"`
	// MaxInFlight caps concurrent requests (0: unlimited; when it binds the
	// schedule lag shows it and the run may be invalid).
	MaxInFlight int `yaml:"max_in_flight" json:"max_in_flight"`
}

// Weighted is a value drawn with a relative weight.
type Weighted struct {
	Name   string  `yaml:"name" json:"name"`
	Weight float64 `yaml:"weight" json:"weight"`
}

// LLMShape is the shape of Q2's chat completions.
type LLMShape struct {
	Model       string `yaml:"model" json:"model"`
	MaxTokens   int    `yaml:"max_tokens" json:"max_tokens"`
	PromptWords int    `yaml:"prompt_words" json:"prompt_words"`
	Stream      bool   `yaml:"stream" json:"stream"`
}

// EmbedShape is the shape of Q2's embedding requests.
type EmbedShape struct {
	Model  string `yaml:"model" json:"model"`
	Inputs int    `yaml:"inputs" json:"inputs"` // texts per request
	Words  int    `yaml:"words" json:"words"`   // words per text
}

// Q2SLO are the per-type service-level objectives. A request meets its SLO
// when it succeeded and each bound set (> 0) holds; TTFT and E2E count
// from the intended send.
type Q2SLO struct {
	LLMTTFT      time.Duration `yaml:"llm_ttft" json:"llm_ttft"`
	LLME2E       time.Duration `yaml:"llm_e2e" json:"llm_e2e"`
	EmbeddingE2E time.Duration `yaml:"embedding_e2e" json:"embedding_e2e"`
}

// DefaultQ2 returns Q2's defaults: full scale 1,000 requests at 50 req/s
// per policy; quick 100 at 20 req/s with shorter prompts and outputs.
func DefaultQ2(quick bool) *Q2Config {
	c := &Q2Config{
		Schedule: load.ScheduleConfig{Process: load.ProcessPoisson, Rate: 50, Count: 1000},
		LLMRatio: 0.7,
		Policies: []string{"fifo", "priority", "slo_aware", "hybrid"},
		Tenants:  []Weighted{{"tenant-a", 0.5}, {"tenant-b", 0.3}, {"tenant-c", 0.2}},
		Priorities: []Weighted{{"critical", 0.05}, {"high", 0.15}, {"normal", 0.6},
			{"low", 0.15}, {"background", 0.05}},
		LLM:       LLMShape{Model: "meta-llama/Llama-3.1-8B-Instruct", MaxTokens: 128, PromptWords: 256, Stream: true},
		Embedding: EmbedShape{Model: "BAAI/bge-small-en-v1.5", Inputs: 4, Words: 64},
		SLO:       Q2SLO{LLMTTFT: 500 * time.Millisecond, LLME2E: 5 * time.Second, EmbeddingE2E: 200 * time.Millisecond},
	}
	if quick {
		c.Schedule.Rate, c.Schedule.Count = 20, 100
		c.LLM.MaxTokens, c.LLM.PromptWords = 32, 64
		c.Embedding.Inputs, c.Embedding.Words = 2, 32
	}
	return c
}

// Validate reports the first problem, naming the q2 key.
func (c *Q2Config) Validate() error {
	if err := c.Schedule.Validate(); err != nil {
		return fmt.Errorf("q2.%w", err)
	}
	if math.IsNaN(c.LLMRatio) || c.LLMRatio < 0 || c.LLMRatio > 1 {
		return fmt.Errorf("q2.llm_ratio %v: must be in [0,1]", c.LLMRatio)
	}
	if len(c.Policies) == 0 {
		return errors.New("q2.policies is empty; list at least one of " + strings.Join(knownPolicies, ", "))
	}
	for _, p := range c.Policies {
		if !slices.Contains(knownPolicies, p) {
			return fmt.Errorf("q2.policies: unknown policy %q; use %s", p, strings.Join(knownPolicies, ", "))
		}
	}
	if err := validateWeights("q2.tenants", c.Tenants, nil); err != nil {
		return err
	}
	if err := validateWeights("q2.priorities", c.Priorities, knownPriorities); err != nil {
		return err
	}
	return c.validateShapes()
}

func (c *Q2Config) validateShapes() error {
	switch {
	case c.LLMRatio > 0 && (c.LLM.Model == "" || c.LLM.MaxTokens < 1 || c.LLM.PromptWords < 1):
		return errors.New("q2.llm: model must be set and max_tokens, prompt_words ≥ 1")
	case c.LLMRatio < 1 && (c.Embedding.Model == "" || c.Embedding.Inputs < 1 || c.Embedding.Words < 1):
		return errors.New("q2.embedding: model must be set and inputs, words ≥ 1")
	case !inRange(c.SLO.LLMTTFT) || !inRange(c.SLO.LLME2E) || !inRange(c.SLO.EmbeddingE2E):
		return fmt.Errorf("q2.slo: bounds must be between 0 (no bound) and %v (the X-SLO-Deadline-Ms limit)", maxSLO)
	case c.MaxInFlight < 0:
		return errors.New("q2.max_in_flight must be ≥ 0 (0 = unlimited)")
	}
	return nil
}

// maxSLO is the largest deadline the gateway accepts in X-SLO-Deadline-Ms.
const maxSLO = 24 * time.Hour

func inRange(bound time.Duration) bool { return bound >= 0 && bound <= maxSLO }

func validateWeights(key string, ws []Weighted, allowed []string) error {
	if len(ws) == 0 {
		return fmt.Errorf("%s is empty; give at least one {name, weight}", key)
	}
	total := 0.0
	for _, w := range ws {
		if w.Name == "" || math.IsNaN(w.Weight) || math.IsInf(w.Weight, 0) || w.Weight < 0 {
			return fmt.Errorf("%s: each entry needs a name and a finite weight ≥ 0", key)
		}
		if allowed != nil && !slices.Contains(allowed, w.Name) {
			return fmt.Errorf("%s: unknown name %q; use %s", key, w.Name, strings.Join(allowed, ", "))
		}
		total += w.Weight
	}
	if total <= 0 {
		return fmt.Errorf("%s: weights sum to 0; give at least one a positive weight", key)
	}
	return nil
}

// Override applies --rate, --total-requests, --duration and --llm-ratio.
// --duration without --total-requests lets the duration end the schedule.
func (c *Q2Config) Override(o Overrides) []string {
	o.applySchedule(&c.Schedule)
	if o.LLMRatio != nil {
		c.LLMRatio = *o.LLMRatio
	}
	return nil
}
