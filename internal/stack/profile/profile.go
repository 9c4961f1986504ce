package profile

import (
	"fmt"
	"time"
)

// Source names one public reference a profile was calibrated from and what
// was read (or derived) from it.
type Source struct {
	Ref  string `yaml:"ref"`  // URL or paper
	Read string `yaml:"read"` // what was taken from it
}

// LLM is the timing and capacity profile of a text-generation engine doing
// continuous batching with chunked prefill, as vLLM does.
//
// One engine iteration ("step") runs every sequence in the batch once: each
// decoding sequence produces one token and prefilling sequences consume up
// to PrefillChunk prompt tokens in total. Its duration is
//
//	StepBase + StepPerSeq·(sequences in the step) + PrefillPerToken·(prompt tokens in the step)
//
// scaled by a seeded jitter factor in [1-Jitter, 1+Jitter].
type LLM struct {
	Name    string   `yaml:"name"`
	Model   string   `yaml:"model"`
	Sources []Source `yaml:"source"`

	MaxNumSeqs    int `yaml:"max_num_seqs"`    // running-batch slots
	KVCacheTokens int `yaml:"kv_cache_tokens"` // KV-cache budget in tokens
	KVBlockTokens int `yaml:"kv_block_tokens"` // page size; requests reserve whole pages
	MaxWaiting    int `yaml:"max_waiting"`     // waiting-queue bound; beyond it: overloaded

	PrefillPerToken time.Duration `yaml:"prefill_per_token"`    // compute per prompt token
	PrefillChunk    int           `yaml:"prefill_chunk_tokens"` // token budget of one step (max_num_batched_tokens)
	StepBase        time.Duration `yaml:"step_base"`            // fixed cost of one step (weights read)
	StepPerSeq      time.Duration `yaml:"step_per_seq"`         // added per sequence in the step

	Jitter           float64 `yaml:"jitter"`             // relative half-width of the uniform step-time noise
	PrefixCache      bool    `yaml:"prefix_cache"`       // reuse KV of shared prompt prefixes
	DefaultMaxTokens int     `yaml:"default_max_tokens"` // output length when a request gives none
}

// StepTime is the duration of one decode step with seqs sequences in the
// batch and no prefill work: StepBase + seqs·StepPerSeq. It is the
// inter-token latency every running sequence sees.
func (p LLM) StepTime(seqs int) time.Duration {
	return p.StepBase + time.Duration(max(seqs, 0))*p.StepPerSeq
}

// PrefillTime is the compute for promptTokens prompt tokens:
// promptTokens·PrefillPerToken (without the step overhead; see IdleTTFT).
func (p LLM) PrefillTime(promptTokens int) time.Duration {
	return time.Duration(max(promptTokens, 0)) * p.PrefillPerToken
}

// IterationTime is the duration of one step carrying seqs sequences of
// which prefill prompt tokens are being prefilled, before jitter.
func (p LLM) IterationTime(seqs, prefillTokens int) time.Duration {
	return p.StepTime(seqs) + p.PrefillTime(prefillTokens)
}

// PrefillSteps is how many steps a prompt of promptTokens needs when it is
// alone: ceil(promptTokens/PrefillChunk), at least 1.
func (p LLM) PrefillSteps(promptTokens int) int {
	if promptTokens <= 0 || p.PrefillChunk <= 0 {
		return 1
	}
	return (promptTokens + p.PrefillChunk - 1) / p.PrefillChunk
}

// IdleTTFT is the modelled time to first token of a request alone on an idle
// engine: every prefill chunk is one step with one sequence, and the last
// prefill step emits the first token.
func (p LLM) IdleTTFT(promptTokens int) time.Duration {
	return time.Duration(p.PrefillSteps(promptTokens))*p.StepTime(1) + p.PrefillTime(promptTokens)
}

// IdleITL is the modelled inter-token latency of a lone request.
func (p LLM) IdleITL() time.Duration { return p.StepTime(1) }

// KVTokens is the KV-cache reservation of a request: prompt plus maximum
// output, rounded up to whole pages of KVBlockTokens.
func (p LLM) KVTokens(promptTokens, maxTokens int) int {
	n := max(promptTokens, 0) + max(maxTokens, 0)
	b := max(p.KVBlockTokens, 1)
	return (n + b - 1) / b * b
}

// Embedder is the timing and capacity profile of an embedding engine doing
// dynamic batching: a batch starts when MaxBatch inputs are queued or the
// oldest queued input has waited MaxWait, and takes
// BatchOverhead + PerToken·(tokens in the batch).
type Embedder struct {
	Name    string   `yaml:"name"`
	Model   string   `yaml:"model"`
	Sources []Source `yaml:"source"`

	Dim           int           `yaml:"dim"`            // vector dimension
	MaxBatch      int           `yaml:"max_batch"`      // inputs per batch
	MaxWait       time.Duration `yaml:"max_wait"`       // longest an input waits for a batch to fill
	BatchOverhead time.Duration `yaml:"batch_overhead"` // fixed cost of a batch
	PerToken      time.Duration `yaml:"per_token"`      // cost per input token
	MaxQueue      int           `yaml:"max_queue"`      // queued inputs bound; beyond it: overloaded
	Jitter        float64       `yaml:"jitter"`         // relative half-width of batch-time noise
}

// BatchTime is the duration of a batch carrying tokens input tokens, before
// jitter: BatchOverhead + tokens·PerToken.
func (p Embedder) BatchTime(tokens int) time.Duration {
	return p.BatchOverhead + time.Duration(max(tokens, 0))*p.PerToken
}

// FieldError names the profile and field that failed validation.
type FieldError struct {
	Profile string
	Field   string
	Msg     string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("profile %q: %s: %s", e.Profile, e.Field, e.Msg)
}
