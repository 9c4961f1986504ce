// Package reqset models the finished requests of one repetition as a
// workload keeps them in memory, to cut them into the configurations it
// reports on its own (a policy's round, a tenant, a priority, a burst
// window): Set collects records concurrently, Where selects, Measure
// folds a selection into counts, exact latency quantiles, SLO attainment
// and goodput, and Busy turns the gateway queue waits the records carry
// into queue occupancy over a window.
package reqset
