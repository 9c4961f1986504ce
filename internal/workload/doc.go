// Package workload is the contract between sagebench's runner and its
// workload families Q1..Q8: what a Q is (Spec), how it is configured
// (Config, Overrides), what it plans (Plan) and what it gets and gives
// back for one repetition (Env, Outcome), and how its result is computed
// again from the run directory alone (Records, Recomputer, RecomputeDir).
//
// Each Q lives in its own package below this one (workload/q1,
// workload/q2, …) and exports its Spec; internal/catalog lists them in
// order; internal/runconfig resolves defaults, YAML and flags into a
// frozen configuration; internal/run drives the repetitions and writes
// the records. Pieces several Qs share live in packages of their own
// (internal/traffic for request mixes and sending).
package workload
