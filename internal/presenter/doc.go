// Package presenter renders a run for people and for Go's benchmark
// tools: the end-of-run table on the terminal, summary.md, the lines of
// bench.txt, and the aggregate over repetitions. It is fed by the run's
// record — its typed result (internal/result), summary and validity — so
// that no workload formats its own figures: a metric's state decides
// whether it prints a value, a bracket, "never" or "–", the same way
// everywhere.
//
// Every rendering starts with the Q's answer sentence.
package presenter
