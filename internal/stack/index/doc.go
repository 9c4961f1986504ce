// Package index is the reference stack's vector store: a deterministic
// synthetic corpus (documents drawn from a fixed vocabulary with topic
// structure, seeded), embedded by a caller-supplied function and held in an
// approximate-nearest-neighbour HNSW graph, with an exact brute-force
// search beside it to measure recall@k.
//
// Pipeline: Config (size, dimension, seed, HNSW parameters) -> Build
// generates the corpus, embeds every document, normalises the vectors and
// inserts them, in id order, into the graph -> Search (ANN, cosine) /
// Exact (brute force) -> Recall compares the two. Queries samples a few
// words of chosen documents, so a RAG workload has questions whose answers
// exist.
//
// Why the graph is implemented here: the design names
// github.com/coder/hnsw, and v0.6.1 — the only version on the module proxy
// — has known search bugs (its heap's Max/PopLast return an arbitrary
// element, and layer search stops as soon as the best result stops
// improving; upstream coder/hnsw PRs #17, #20 and #22). On this corpus it
// reaches recall@10 ≈ 0.09 (BenchmarkCoderHNSW measures it side by side).
// graph (hnsw.go) follows the HNSW paper (Malkov & Yashunin,
// arXiv:1603.09320: algorithms 1, 2 and 4, including the neighbour
// selection heuristic) with coder/hnsw's parameter names, and reaches
// recall@10 ≥ 0.9 at the defaults (TestRecallAtDefaults). Swap back once
// a fixed coder/hnsw release exists.
package index
