// Package profile is the catalog of engine timing profiles the reference
// stack simulates: how long a prefill, a decode step or an embedding batch
// takes on a given model and accelerator, and how much work (sequences, KV
// cache tokens, queue) the engine admits.
//
// The catalog is YAML (catalog.yaml, embedded; or any file through LoadFile)
// decoded strictly: unknown keys are errors and Validate rejects impossible
// values, naming the profile and the field. Every profile carries the public
// sources its numbers were read or derived from.
//
// The timing model is pure arithmetic on a profile (PrefillTime, StepTime,
// IterationTime, IdleTTFT, BatchTime …), so that package sim and the
// fidelity benchmarks compare against exactly the same formulas.
package profile
