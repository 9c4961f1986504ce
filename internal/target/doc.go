// Package target models the system under test of a run: either the
// embedded reference stack, started in-process on 127.0.0.1 with a free
// port and stopped after, or any OpenAI-compatible base URL. Open resolves
// a Config into a Target, checks that it answers (GET /v1/models, then
// /health) before any traffic, and gives the workload its base URL, a
// description without secrets, and the gateway's admin operations
// (scheduling policy get/set) where the target supports them.
package target
