// Package aggregate holds the statistics of results across runs: one
// metric's estimate over repetitions (Estimate), an experiment's
// aggregate over its repetitions (Runs), and the unified rows that put a
// run, a configuration of a run, or an aggregate into
// unified_results.jsonl/.csv.
//
// The model of an estimate: only valid repetitions enter it; those in
// which the metric was not measurable are counted apart. Repetitions
// that disagree in state (never in 2 of 3, 4.0 s in 1) are a bound over
// every value and bracket, never a mean of the measured ones. Measured
// repetitions get the method their unit calls for, each keeping the
// uncertainty the repetitions themselves carry:
//   - a fraction with its request count: the requests pooled, Wilson
//     score interval, widened by the overdispersion χ²/(R−1) when the
//     repetitions disagree beyond binomial sampling;
//   - a positive quantity (a latency, a rate, a ratio): Student's t on
//     the logarithms, the point the geometric mean, the half-width never
//     below the repetitions' own intervals' (on the log scale, over √R);
//   - a signed relative change in %: the same on the ratio 1 + x/100, so
//     the interval stays in (−100 %, ∞);
//   - anything else (a signed drift, a zero among the values): Student's
//     t, intersected with the metric's domain.
//
// One repetition keeps its own interval. An interval is never zero-wide:
// repetitions that agree and carry no interval of their own get none,
// with the reason.
//
// `sagebench run --repeat`, `sagebench aggregate` (the leaderboard) and
// the unified aggregate row all call Estimate, so their numbers agree.
package aggregate
