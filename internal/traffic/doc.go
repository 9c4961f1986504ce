// Package traffic holds what the workload families share about the
// requests they send: weighted draws of tenants and priorities (Weighted,
// Pick), the shapes of chat and embedding requests (LLMShape, EmbedShape),
// deterministic prompt text (Words), and Send, which turns one drawn
// request (Item) into an OpenAI call with the protocol headers (tenant,
// priority, type, deadline) and a timed record.
//
// A Q draws its Items from its seed up front, so the same seed gives the
// same requests whatever the target or policy; the schedule decides when
// each is sent. Phase.Run sends a phase from this process, or, when the
// run has load nodes (workload.Env.Load, --nodes N), materialises it
// (Phase.Plan) for the nodes, which prepare their shards before the
// start (PrepareShard) and send them at it (Shard.Send).
package traffic
