// Package leaderboard models the standing of benchmark runs across a
// results tree. Its pipeline is collect (every unified_results.jsonl
// under a directory, rows deduplicated by run_id) → split (valid runs
// from invalid ones, which are listed apart and never averaged) → group
// (workload, backend, nodes, parallelism, config_hash) → summarise (mean
// and a t confidence interval over repetitions per metric) → compare
// backends on the same workload, shape and seeds (Welch t-test) → render
// as Markdown, CSV or JSON.
package leaderboard
