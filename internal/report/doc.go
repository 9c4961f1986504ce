// Package report renders sagebench run directories as one self-contained
// HTML page for people, and their figures as files. Its pipeline is
// discover (run directories, or the runs under a results root) → load
// (run.json, requests.jsonl, metrics.jsonl and a drill's events.jsonl
// and windows.jsonl, tolerating missing or damaged files, which become
// problems shown on the page) → sections (the runs of one Q at one
// scale, drawn side by side on shared axes; other Qs and scales apart,
// under a banner) → figures (the Q's answer figure first, from package
// answer; then TTFT, inter-token and end-to-end latency CDFs,
// throughput and latency over time with phases and drill events, the
// scraped target metrics) and the comparison across configurations
// (aggregate.Runs, only where there are repetitions) → output: HTML
// with every figure inlined as SVG (no script, no network at view time,
// a Content-Security-Policy), or one SVG, PDF or PNG file per figure.
package report
