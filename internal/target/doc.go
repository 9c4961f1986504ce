// Package target models the system under test of a run: either the
// embedded reference stack, started in-process on 127.0.0.1 with a free
// port and stopped after, or any OpenAI-compatible base URL. Open resolves
// a Config into a Target, checks that it answers (GET /v1/models, then
// /health) before any traffic, and gives the workload its base URL, a
// description without secrets, and the gateway's admin operations
// (scheduling policy get/set) where the target supports them. Admin calls
// carry the admin token only, no call follows a redirect, an admin failure
// is an *AdminError (a tool error, unlike ErrPolicyUnsupported), and
// Redactor is the rule for every string that came from the target.
package target
