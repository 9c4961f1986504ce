// Package sim simulates inference engines in-process, so the reference stack
// has something true to measure without a GPU.
//
// An LLM engine does continuous batching the way vLLM does: requests wait in
// a bounded queue, are admitted FCFS into at most MaxNumSeqs running slots
// when their whole KV reservation (prompt + max_tokens, in pages) fits the
// budget, have their prompt prefilled in chunks that share steps with the
// decodes of other sequences, reuse prefix-cached prompt blocks, and emit one
// token per step. Step durations come from the profile's timing model
// (package profile) with seeded jitter. An embedding engine does dynamic
// batching (max batch, max wait) with batch time overhead + per-token cost.
//
// Each engine is one event-loop goroutine driven by one timer: commands
// (submit, cancel, fault hooks) arrive on a channel, the timer marks the end
// of the current step or batch. The loop never blocks on a consumer: a
// stream only counts produced tokens under its own mutex and pokes a
// capacity-1 notify channel; token text is derived from the count. Time
// comes from a Clock, so tests drive engines with a FakeClock exactly.
//
// Text helpers shared with the gateway: CountTokens (one token per
// whitespace-separated word, plus one per further 8 runes of a long word)
// and Vector (deterministic unit vectors by feature hashing, so that
// retrieval over them is real).
package sim
