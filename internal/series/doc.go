// Package series turns a run's request records into windowed time series
// and reads recovery and drift off them, for the drills (Q5, Q7, Q8) and
// the bursts of Q6.
//
// Model: a sliding window of Width advanced by Step over the run, from
// offset 0 to the last intended send. A window holds the requests whose
// *intended* send falls in it — the load offered in that interval — with
// their outcome: count, ok, explicit errors, SLO met, and the p50/p99 of
// TTFT and E2E (both from the intended send, so a request that waited out
// a fault shows in the window it was due in). The quantiles follow the
// one failure rule: a failed request counts as +∞, so a window whose
// failures reach a quantile's rank has that quantile +∞ (a window where
// everything failed is +∞, never empty); the successes' own quantiles
// are beside them under names ending in OK. Throughput and goodput are
// the window's ok and SLO-meeting requests per second of Width.
//
// Recovery from a fault (Recover) has three states: never violated (every
// window from the fault until the next fault kept the rule: metric within
// its bound, no failed request), recovered (after a violation, the
// windows kept the rule for the hold time from a window starting at or
// after the fault's end — a pause or a slowdown cannot recover while it
// is on; the time is counted from that end), or never recovered by the
// end. Times lie on the window grid, exact to ± Step. Drift is the
// least-squares slope of a windowed metric over time with its 95 %
// confidence interval, over the windows where the metric is finite.
// In records (windows.jsonl) a quantile is an Ms: a number, "+Inf" or
// null.
package series
