// Package dataset reads the request traces and prompt datasets users
// already have, as vLLM's bench serve, AIPerf and GuideLLM take them:
// traces with arrival times and lengths in tokens — Mooncake JSONL
// (timestamp ms, input_length, output_length, hash_ids), the Azure LLM
// inference trace CSV (TIMESTAMP, ContextTokens, GeneratedTokens) and
// BurstGPT CSV (Timestamp, …, Request tokens, Response tokens, …) — and
// prompt datasets with text — ShareGPT JSON (conversations) and JSONL
// {"prompt": …} — whose lengths are measured with the run's tokenizer.
//
// Every reader is bounded and names file:line and the field of the first
// bad record (*Error), so a bad file is a configuration error.
package dataset
