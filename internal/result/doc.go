// Package result is the typed answer of one workload (a Q) for one
// repetition: the sentence that answers the Q's question, its primary
// metric, its other metrics, the outcome of each drill event, the
// targets the system under test was held to, and the tables that back
// the answer.
//
// The model: every Metric carries a State. Only a measured metric has a
// value, and that value is finite and inside the domain its unit implies
// (a fraction in [0, 1], a time or a rate ≥ 0). A metric that was only
// bracketed (a frontier between a passing and a failing rate, a quantile
// bounded below by failed requests) is a bound with its Interval; a time
// that did not occur within the run (never recovered, never violated) is
// never, with the Reason saying which; a metric the run could not
// measure (the target reports no engine IDs) is not_measurable, with the
// Reason saying why. No sentinel number (-1, 0 for "none", NaN) stands in
// for a state, so nothing downstream — summaries, unified rows,
// aggregates, reports — can mistake one for a measurement.
//
// Pipeline: a Q defines its metrics (Def), measures them into Metrics
// (Def.Measure, Def.NotMeasurable, …), assembles a Result, and the runner
// checks it (Result.Check), judges its targets (Judge) and hands it to
// the presenter and the records.
package result
