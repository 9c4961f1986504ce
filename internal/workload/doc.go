// Package workload is the catalog of sagebench's workload families Q1..Q8
// and the runner that turns one of them into run records.
//
// Pipeline: Lookup finds a Spec in the Catalog; Spec.New(quick) gives a
// Workload whose Config holds the per-Q defaults at full or quick scale;
// LoadFile decodes the shared keys and the q1..q8 sections of a YAML file
// (strict, ${VAR} expanded) over those defaults; flag overrides go on top;
// Resolve validates everything and freezes the effective configuration
// (its canonical JSON and its sha256). Runner.Run then does each
// repetition: it opens the target, creates OUT/<q>/<run-id>/, calls
// Workload.Run with an Env whose Record streams every request to
// requests.jsonl and the summary Collector, and writes run.json,
// summary.md, bench.txt and the unified rows — with "complete": false when
// the context was cancelled.
package workload
