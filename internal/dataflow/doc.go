// Package dataflow is sagebench's dataflow runtime (--backend sage): the
// client side of a workload, such as Q1's RAG transaction, runs on it as a
// graph of named stages.
//
// A Graph is a chain of stages (StageConfig: name, operator, parallelism,
// queue capacity, timeout, params), read from YAML with ParseGraph or built
// in code. Each stage names an operator registered in a Registry (an
// explicit value, no package globals); Registry.Validate rejects an unknown
// name with *UnknownOperatorError listing the registered ones. An Operator
// turns one input Record into zero or more outputs through emit. A Record
// has a stable ID, opaque Payload bytes, Metadata (trace, tenant, intended
// time, deadline) and, appended by the engine, one Hop per stage with the
// times it was enqueued, started and ended there — so queueing inside the
// runtime is told apart from service time, and each hop's latency is
// measurable. An Observer function sees the same per stage as it happens.
//
// Engine is the seam between a graph and where it runs:
//
//	Deploy(ctx, graph)  validate, build operators, create queues
//	Serve(ctx)          run this process's workers until drained or cancelled
//	Submit(ctx, rec)    offer a record to the first stage (blocks: backpressure)
//	Results()           completed records and error records, once per ID
//	CloseInput()        no more input; Serve returns once everything is out
//
// Local is the in-process engine: each stage has a bounded channel as its
// queue and Parallelism worker goroutines; a full queue blocks the emitter,
// so a slow stage slows everything upstream down to Submit, and memory is
// bounded by the queue capacities and worker counts, never by the input.
// A worker acks its input only after Process has returned, i.e. after
// every output was handed on (ack after emit). A stage error, panic or
// timeout becomes an error record (Record.Err, a *StageError) delivered to
// Results in place of the record's outputs, and the run goes on. The sink
// drops records whose ID it has already delivered in this run. Nothing
// orders records across workers. Local keeps the distributed rules so that
// tests on one machine catch distributed bugs: with LocalOptions.Serialize
// every record crosses each stage boundary through the wire format
// (AppendRecord/DecodeRecord), and with LocalOptions.Redeliver a stage is
// handed records it already acked, as after a lost ack, so that operator
// idempotency and sink dedup are exercised.
//
// The NATS JetStream engine (package dataflow/jetstream) implements the
// same interface across processes and machines: a work-queue stream and a
// durable pull consumer per stage, Nats-Msg-Id = record ID, publish-then-
// ack, InProgress heartbeats for long operators, MaxDeliver with backoff
// and a dead-letter stream, dedup at the sink, and drain detection by
// credits that outputs split. Call runs one delivery through an operator
// the way both engines do (errors, panics and timeouts become a
// *StageError). The conformance suite in dataflow/dataflowtest runs
// against both engines.
package dataflow
