// Package stack assembles the reference stack that `sagebench serve` and
// the embedded target run: a gateway (package gateway) in front of
// simulated engines (package sim, in-process or as child processes),
// remote OpenAI-compatible engines (package remote) and a vector index,
// all described by one strict YAML Config.
//
// Pipeline: Config (YAML or DefaultConfig) → Validate → Start: build
// engines and the index, bind Listen, serve the gateway → Close: stop
// accepting, let in-flight requests finish within ShutdownTimeout, cancel
// the rest, close engines and kill child processes.
package stack
