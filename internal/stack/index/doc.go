// Package index is the reference stack's vector store: a deterministic
// synthetic corpus (documents drawn from a fixed vocabulary with topic
// structure, seeded), embedded by a caller-supplied function and held in an
// approximate-nearest-neighbour HNSW graph (github.com/coder/hnsw), with an
// exact brute-force search beside it to measure recall@k.
//
// Pipeline: Config (size, dimension, seed, HNSW parameters) -> Build
// generates the corpus, embeds every document, normalises the vectors and
// inserts them into the graph -> Search (ANN, cosine) / Exact (brute force)
// -> Recall compares the two. Queries samples a few words of chosen
// documents, so a RAG workload has questions whose answers exist.
package index
