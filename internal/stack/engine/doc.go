// Package engine declares what the gateway needs from an inference engine,
// whether it is simulated in-process (package sim), a child process, or a
// real OpenAI-compatible server reached over HTTP. The contracts here are
// the seam between the scheduler and whatever serves the tokens.
package engine
