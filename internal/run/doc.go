// Package run drives the repetitions of one resolved experiment and
// writes their records. It models a repetition as: open the target, write
// a run.json that says "complete": false, hand the Q an Env whose Record
// streams every finished request to requests.jsonl and to the summary
// collector, then fold what the Q returned — its phases and typed result
// — into run.json (the summary, the result completed with the run-level
// metrics and its targets judged, validity), summary.md and bench.txt
// (internal/presenter), and the unified rows (internal/aggregate).
//
// Pipeline: Runner.Run → runOnce per repetition (target, warm-up,
// scrape of /metrics, drive, finish, writeRecords) → writeAggregate over
// the repetitions (aggregate.Runs). Orchestration only: the statistics
// of results live in internal/aggregate, their rendering in
// internal/presenter.
package run
