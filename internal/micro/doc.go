// Package micro holds the microbenchmark surfaces of sagebench as a table
// of named cases: FedAvg aggregation (BenchmarkAggregate), the memory
// floor for the same bytes (BenchmarkMemoryFloor) and the gradient codecs
// (BenchmarkCodec). The same Case bodies run under `go test -bench` (see
// micro_test.go) and from the sagebench binary through testing.Benchmark
// (Run), which prints Go benchmark format. Aggregate, MemoryFloor and Codec
// cases report cpu-ns/op (process CPU time) next to ns/op, because this
// suite is meant to be run on shared machines. Report reads such output
// and tabulates JSON against the zero-copy codec and FedAvg against the
// floor, or prints the goal ratios (WriteGoals). The workers=auto cases
// run with a fedavg.Machine from a probe cached in a file per CPU,
// kernels and GOMAXPROCS, revalidated at every start and expiring after 7
// days (ResolveProbe); every run names the probe it used. The aggregation
// matrix can be printed under the Sovereign-Mohawk contract's names.
package micro
