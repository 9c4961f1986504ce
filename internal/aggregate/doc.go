// Package aggregate holds the statistics of results across runs: one
// metric's estimate over repetitions (Estimate), an experiment's
// aggregate over its repetitions (Runs), and the unified rows that put a
// run, a configuration of a run, or an aggregate into
// unified_results.jsonl/.csv.
//
// The model of an estimate: only valid repetitions in which the metric
// was measured enter the mean; the others are counted by why they were
// left out (invalid, bound, never, not measurable). The mean's interval
// is computed only from two measured values on: Student's t interval of
// the mean, intersected with the metric's domain (a time or a rate ≥ 0,
// a fraction in [0, 1]). The true mean lies in the domain, so the
// intersection never lowers the interval's coverage, and no interval
// says a latency may be negative or an attainment above 100 %.
//
// `sagebench run --repeat`, `sagebench aggregate` (the leaderboard) and
// the unified aggregate row all call Estimate, so their numbers agree.
package aggregate
