// Package report renders sagebench run directories as one self-contained
// HTML page for people and as figure files for papers. Its pipeline is
// load (run.json, requests.jsonl and metrics.jsonl of each run directory,
// tolerating missing or damaged files, which become problems shown on the
// page) → figures (gonum/plot: latency CDFs per group, throughput, errors
// and windowed p99 over time, recorded target metrics, per-group bars, and
// across runs an overlaid CDF and the throughput–p99 frontier) → output:
// HTML with every figure inlined as SVG (no script, no network at view
// time), or one SVG or PNG file per figure.
package report
