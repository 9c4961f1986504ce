// Package fleet generates one open-loop phase's load from several nodes
// (the workers of `sagebench run --nodes N`) against one target, with the
// records coming back to the run's process.
//
// Pipeline, per phase: the coordinator (Coordinator, a
// workload.LoadFleet) takes the phase materialised by traffic.Phase.Plan,
// shards it by request index — request i goes to node i mod N, so every
// node sends 1/N of the rate over the whole span and the target sees the
// global schedule — and hands each node its shard in parts over NATS
// request/reply. It then publishes a start instant (now + Lead, shifted
// by each node's measured clock offset so the intended times line up).
// Each node (NodeConfig.Service, served by `sagebench worker`) decodes
// and compiles its shard once it is whole (traffic.PrepareShard, before
// the start), sends it at the intended times with its own target
// client, and publishes every record to the run's JetStream stream
// SAGEBENCH_<run>_L sealed with the run key (a MAC under a key derived
// from the join token and the run ID, see integrity.go; Nats-Msg-Id = the
// MAC, so a republished record is dropped), then a done message with its
// count. The coordinator reads the phase's subject, keeps each planned ID
// once, and only from the node whose shard holds it (duplicates counted;
// unauthenticated, foreign, malformed and oversized messages counted as
// an integrity failure, see workload.IntegrityError), and returns when every node is done and its records are in,
// or at the bound span + Tail (records still missing are counted and
// noted, never dropped silently). An interrupt sends stop to every node,
// which drains like a local driver.
package fleet
