// Package gateway is the reference stack's OpenAI-compatible front door and
// control plane. It decodes and validates requests, admits them per tenant
// (sched.Quotas), queues them per engine kind under a switchable
// sched.Policy, and dispatches one to an engine only when that engine has a
// free slot (in-flight < Load().Slots), so the policy decides the order under
// contention. Routing picks the fastest free engine for urgent work and the
// least loaded otherwise; engines that fail are ejected and probed back in;
// a request that fails before its first token is retried once elsewhere.
//
// Pipeline: HTTP → decode/validate → quota → pool queue (policy) → router →
// engine.LLM/Embedder → SSE or JSON response, with Prometheus metrics on an
// own registry and an admin API under /admin/. A stream is written at the
// engine's token boundaries: the tokens it has ready go out in one write
// and flush. Vectors a remote engine hands over as JSON text are written
// as they are.
//
// Words: an engine handed to the gateway is a Member (the engine.LLM or
// engine.Embedder plus what the gateway knows of it); inside a pool it has
// an entry holding its state and counters.
//
// Locks: Gateway.mu (engines by id, the policy) is taken before any
// pool.mu, never after; a pool's mutex guards its queues and its entries'
// mutable fields, and no two pool locks are held at once. Engines'
// Load() is called under pool.mu and must not block; nothing else of an
// engine is called under a lock.
package gateway
