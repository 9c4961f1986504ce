// Package jetstream runs dataflow graphs on NATS JetStream, across
// processes and machines, behind the same dataflow.Engine contract as the
// in-process engine (the dataflowtest conformance suite runs on both).
//
// One run has a coordinator (Engine) and any number of workers (Worker,
// `sagebench worker`):
//
//   - Deploy creates, per stage i, a work-queue stream SAGEBENCH_<run>_S<i>
//     (MaxMsgs = the stage's queue capacity, DiscardNew) with a durable
//     pull consumer (AckExplicit, AckWait, MaxDeliver+1 with a doubling
//     BackOff), a results stream SAGEBENCH_<run>_R read by the
//     coordinator's sink, and a dead-letter stream SAGEBENCH_<run>_D. It
//     refuses to start while streams of crashed runs (whose coordinator no
//     longer answers a ping) remain, naming `sagebench worker --clean`.
//   - Workers join over request/reply (sagebench.<run>.join): the
//     coordinator answers with the graph, or refuses a worker of another
//     version, of another graph, or lacking an operator, naming both sides.
//     A worker builds the operators from its own Registry and runs
//     Parallelism fetchers per stage. Unless RemoteOnly, the coordinator
//     serves every stage itself too.
//   - A fetcher decodes the record, runs the operator (dataflow.Call:
//     errors, panics and timeouts become error records) while sending
//     InProgress every AckWait/3, publishes the outputs asynchronously to
//     the next stage's subject with Nats-Msg-Id = record ID (the stream
//     drops a republished output), and an acker acks the input once the
//     server has stored every output (publish-then-ack). A full stream
//     rejects a publish; it is retried with backoff: that is the
//     backpressure, down to Submit.
//   - A delivery beyond MaxDeliver (a poison record that kept killing its
//     workers) is copied to the dead-letter stream and forwarded as a
//     KindDeadLetter error record under its own Nats-Msg-Id; the sink
//     counts it.
//   - The sink delivers each record ID once to Results and counts the
//     duplicates it drops. The run drains by credit: each submitted record
//     carries 2^40 units; an operator's outputs split its credit (each
//     takes half of what is left, the last one the rest), a call that
//     emits nothing returns its credit, and Serve returns once the sink
//     holds one unit per submitted record — fan-out, filters, errors and
//     redeliveries included, in integer arithmetic.
//   - Serve then publishes sagebench.<run>.end (workers leave), closes
//     Results and deletes the run's streams.
//
// A run may also be opened without a graph (Engine.Open, Cluster.Open):
// it checks versions at join like any run, but admits only workers that
// offer a Service (WorkerConfig.Service, advertised at join with its own
// subject, WorkerInfo.Service); they serve it until the coordinator ends
// the run at Close. internal/fleet uses this to have the workers send the
// load shards of a phase.
//
// StartEmbedded runs a JetStream server in-process (127.0.0.1, a free
// port, a temporary store removed at Shutdown); StartCluster combines it
// with SpawnWorkers for `sagebench run --nodes N`, or waits for N workers
// on an existing cluster.
package jetstream
