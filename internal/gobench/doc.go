// Package gobench compares a git base ref against the working tree of any
// Go module with Go benchmarks, and gates the result.
//
// Pipeline: check the ref exists and the worktree is clean → check out the
// ref in a temporary git worktree (removed on return, also on error or
// cancellation) → list the packages with tests on both sides → compile
// one test binary per package and side (go test -c) → list the expected
// symbols in both binaries (-test.list) → run the binaries interleaved,
// base then current, Count times (so drift hits both) → read the raw
// outputs with benchset → gate.Evaluate → write the Markdown report and
// the raw outputs.
package gobench
