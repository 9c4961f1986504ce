// Package capture models a stress capture of Prometheus exporters: the
// metric series a target exposes, sampled over fixed windows. Its pipeline
// is scrape (HTTP GET, text or OpenMetrics parsed with expfmt) → select
// (name regexes, label matchers, a cardinality cap) → a timeline of
// samples per target → windows (start, end, delta with counter-reset
// handling, rate; histogram quantiles with histogram_quantile semantics) →
// statistics across windows → capture.json (schema SchemaVersion) and
// capture.md. A /proc resource snapshot of named processes is sampled on
// the same ticks.
//
// Recorder is the lighter sibling used during a benchmark run: it scrapes
// the target every interval into a bounded metrics.jsonl, which
// ReadMetrics reads back and Summarize condenses for run.json and the
// report.
package capture
