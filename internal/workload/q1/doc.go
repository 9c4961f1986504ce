// Package q1 is Q1 PipelineChain (entry e2e_pipeline): a RAG transaction
// — embed the question, retrieve the top-k documents, generate an answer
// with them as context — run open-loop on the dataflow runtime
// (internal/dataflow), in-process or on NATS JetStream workers (--nodes
// N), or on a Ray cluster (--backend ray). The questions come from the
// same synthetic corpus the embedded stack indexes, so recall@k is
// measured against exact search.
//
// Pipeline: Run rebuilds the corpus, deploys the graph, feeds it the
// schedule's arrivals and records each transaction and its stages as
// the sink receives them; result folds them into goodput (transactions
// per second meeting the end-to-end SLO, the primary), the transaction
// E2E, the per-stage breakdown with the runtime's own overhead, and
// recall@k. What those read that requests.jsonl does not hold — per
// transaction the runtime's queueing, operator and sink times, the ids
// retrieval returned and exact search's — goes into pipeline.json, so
// that Recompute computes the same result from the run directory alone.
package q1
