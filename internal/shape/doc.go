// Package shape models the size and structure of LLM requests in tokens,
// as vLLM's bench serve, GuideLLM and AIPerf specify them: lengths drawn
// from distributions (Dist: fixed, uniform, normal, lognormal, empirical),
// shared system prompts (Prefix), multi-turn sessions (Sessions), and
// prompts synthesized to an exact token count (Synth).
//
// The pipeline per request: the workload draws a seed; Dist.Draw turns it
// into input and output lengths; Synth slices a prompt of exactly that
// many tokens out of one memoized text whose words are each one token of
// the run's tokenizer (so a prompt costs a substring, not a tokenization);
// a prefix group adds one of G fixed system prompts in front.
package shape
