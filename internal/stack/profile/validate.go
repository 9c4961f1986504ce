package profile

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Validate reports every impossible value of p, each naming the field.
func (p LLM) Validate() error {
	v := validator{profile: p.Name}
	v.name(p.Name, p.Model, p.Sources)
	v.positive("max_num_seqs", p.MaxNumSeqs)
	v.positive("kv_cache_tokens", p.KVCacheTokens)
	v.positive("kv_block_tokens", p.KVBlockTokens)
	v.positive("max_waiting", p.MaxWaiting)
	v.positive("prefill_chunk_tokens", p.PrefillChunk)
	v.positive("default_max_tokens", p.DefaultMaxTokens)
	v.duration("prefill_per_token", p.PrefillPerToken, false)
	v.duration("step_base", p.StepBase, true)
	v.duration("step_per_seq", p.StepPerSeq, false)
	v.jitter(p.Jitter)
	if p.KVBlockTokens > 0 && p.KVCacheTokens > 0 && p.KVCacheTokens < p.KVBlockTokens {
		v.fail("kv_cache_tokens", "must hold at least one kv_block_tokens page (got %d < %d)", p.KVCacheTokens, p.KVBlockTokens)
	}
	if p.DefaultMaxTokens > 0 && p.KVCacheTokens > 0 && p.KVTokens(1, p.DefaultMaxTokens) > p.KVCacheTokens {
		v.fail("default_max_tokens", "a request with it cannot fit kv_cache_tokens %d", p.KVCacheTokens)
	}
	return v.err()
}

// Validate reports every impossible value of p, each naming the field.
func (p Embedder) Validate() error {
	v := validator{profile: p.Name}
	v.name(p.Name, p.Model, p.Sources)
	v.positive("dim", p.Dim)
	v.positive("max_batch", p.MaxBatch)
	v.positive("max_queue", p.MaxQueue)
	v.duration("max_wait", p.MaxWait, false)
	v.duration("batch_overhead", p.BatchOverhead, false)
	v.duration("per_token", p.PerToken, false)
	v.jitter(p.Jitter)
	if p.BatchOverhead == 0 && p.PerToken == 0 {
		v.fail("batch_overhead", "batch_overhead and per_token cannot both be 0")
	}
	return v.err()
}

type validator struct {
	profile string
	errs    []error
}

func (v *validator) fail(field, format string, args ...any) {
	v.errs = append(v.errs, &FieldError{Profile: v.profile, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) name(name, model string, sources []Source) {
	if name == "" {
		v.fail("name", "must not be empty")
	}
	if model == "" {
		v.fail("model", "must not be empty")
	}
	if len(sources) == 0 {
		v.fail("source", "give at least one public source (ref and read) the numbers came from")
	}
	for i, s := range sources {
		if s.Ref == "" || s.Read == "" {
			v.fail(fmt.Sprintf("source[%d]", i), "needs both ref and read")
		}
	}
}

func (v *validator) positive(field string, n int) {
	if n <= 0 {
		v.fail(field, "must be > 0 (got %d)", n)
	}
}

func (v *validator) duration(field string, d time.Duration, mustBePositive bool) {
	switch {
	case d < 0:
		v.fail(field, "must not be negative (got %v)", d)
	case mustBePositive && d == 0:
		v.fail(field, "must be > 0")
	case d > time.Minute:
		v.fail(field, "is implausibly long (got %v, limit 1m)", d)
	}
}

func (v *validator) jitter(j float64) {
	if math.IsNaN(j) || j < 0 || j >= 1 {
		v.fail("jitter", "must be in [0, 1) (got %v)", j)
	}
}

func (v *validator) err() error { return errors.Join(v.errs...) }
