// Package record defines what a sagebench run leaves on disk and writes it
// safely. A run directory OUT/<q>/<run-id>/ holds:
//
//	run.json        Run: config, environment, validity, summary (atomic write)
//	requests.jsonl  one Request per line, streamed while the run goes
//	summary.md      the human summary
//	bench.txt       Go benchmark format, one line per repetition and configuration
//
// and OUT/unified_results.jsonl and .csv receive one Unified row per run, in
// the schema of the original Python benchmark_sage. Times inside a Request
// are nanosecond offsets from Run.StartedAt so that a line stays small and
// exact; derived latencies are milliseconds.
//
// Records survive faults: requests.jsonl is written in whole-line batches
// (a short write is cut back to the last whole line, the first write error
// is signalled on RequestWriter.Failed), every line is bounded (Bound),
// readers keep whole lines and report a cut tail (ErrCutTail), and
// CheckWritable proves before a run that the output directory takes the
// records' realistic size (RecordBytes).
package record
