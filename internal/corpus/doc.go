// Package corpus is the deterministic synthetic document collection that
// retrieval runs over, shared by the reference stack's index (the system
// under test) and the harness (which needs the same documents to make
// questions and to measure recall, but must not reach into the system
// under test to get them).
//
// Pipeline: Documents(cfg) draws cfg.Size documents, each from one of
// cfg.Topics topics, from a fixed vocabulary and cfg.Seed; Vector maps a
// text to a deterministic unit vector by feature hashing (the simulated
// embedders return exactly these vectors, so retrieval on the reference
// stack is real); New embeds every document and keeps the unit vectors,
// over which Exact is brute-force k-nearest-neighbour search and Queries
// makes questions whose answer exists in the corpus.
package corpus
