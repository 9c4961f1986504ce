// Package series turns a run's request records into windowed time series
// and reads recovery and drift off them, for the drills (Q5, Q7, Q8) and
// the bursts of Q6.
//
// Model: a sliding window of Width advanced by Step over the run, from
// offset 0 to the last intended send. A window holds the requests whose
// *intended* send falls in it — the load offered in that interval — with
// their outcome: count, ok, explicit errors, SLO met, and the p50/p99 of
// TTFT and E2E (both from the intended send, so a request that waited out
// a fault shows in the window it was due in). Throughput and goodput are
// the window's ok and SLO-meeting requests per second of Width.
//
// Recovery after an event at time e is the time from e until the first
// window starting at or after e from which the chosen p99 stays within
// its bound for Hold (consecutive compliant windows covering Hold); a
// window with no requests counts as compliant only when nothing was
// offered. Never recovering is a valid answer (Recovered false). Drift is
// the least-squares slope of a windowed metric over time with its 95 %
// confidence interval.
package series
