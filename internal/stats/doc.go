// Package stats compares benchmark samples the way benchstat does, on top
// of golang.org/x/perf/benchmath and benchproc, and returns the numbers as
// data instead of a printed table.
//
// Pipeline: benchfmt results → benchproc projections (table = config and
// unit, row = full name, column = input or a --col key) → one
// benchmath.Sample per cell → Summary (median and a distribution-free
// confidence interval) per cell and Comparison (Mann-Whitney U) of each
// cell against the first column → geomean of the medians and of the
// ratios per column. The numbers equal benchstat's on the same input; the
// golden tests in this package hold that.
//
// Direction says which way a unit gets worse (ns/op up, req/s down); it is
// explicit here so that the gate and the reports agree.
package stats
