// Package protocol holds the words sagebench's client side and its
// reference stack share on the wire: the request and response headers the
// gateway honours, the priority and policy names, the request types and
// the admin API's paths. The gateway, the scheduler, the workloads, the
// RAG operators and the target all take their names from here, so two
// lists cannot drift apart.
//
// Every name here is part of the documented interface of `sagebench
// serve` (docs/serve.md): an external target that wants to be measured
// the same way honours the same headers.
package protocol
