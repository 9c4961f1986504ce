// Package rag holds the operators of Q1's RAG transaction and the payload
// that carries a transaction through them on the dataflow runtime.
//
// Pipeline: the workload submits one runtime.Record per transaction whose
// Payload is an encoded Txn (AppendTxn) holding the query. The embed
// operator embeds the query (POST /v1/embeddings), retrieve asks the
// target's vector index for the top-k documents of that embedding (POST
// /v1/retrieve, so an external target supplies its own index), and generate
// streams a chat completion whose prompt carries the retrieved passages.
// Each operator decodes the Txn, makes its one call, appends a Call with the
// call's client-side timing (the runtime's Hops hold the queueing around
// it) and emits the re-encoded Txn under the same record ID, so a
// redelivered input yields the same output. A failed call is returned as a
// *CallError; the runtime turns it into an error record whose message keeps
// the error class, which ParseCallError reads back.
//
// Register puts the three operators into a runtime.Registry under the names
// OpEmbed, OpRetrieve and OpGenerate; stage params (model,
// max_tokens) override the Defaults per stage.
package rag
