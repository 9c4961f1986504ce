// Package calibrate measures the harness's own error. It runs an
// in-process OpenAI-compatible server whose answers are due at exact,
// configured times — the first token TTFT after the request arrives, each
// next one ITL later, an embedding after EmbedLatency — scheduled on an
// absolute clock, so timer overshoot does not accumulate, and reports for
// every answer when it really wrote it (protocol.HeaderServerTiming).
//
// Pipeline: `sagebench calibrate -e Q2` (or `run --calibrate`) drives the
// workload's own plan — rate, mix, concurrency — through the same client,
// driver and records against this server for a few seconds; Floor then
// compares what the harness measured with what was true: measured minus
// true TTFT, ITL and E2E (median, p99, max; true is when the server
// really wrote the answer, by its own report), the delivered-rate error,
// and the server's own lateness (so a late server is not blamed on the
// harness). The result is the run's measurement floor: an effect smaller
// than it cannot be told from the harness's own error.
//
// The same server graded any tool: StartServe (`sagebench calibrate
// serve`) runs it on a loopback address with a documented schedule and
// appends, per answered request, what it really did to a ground-truth log
// (Truth); ReadExport reads a tool's native export — sagebench's records,
// AIPerf, GuideLLM, inference-perf, genai-bench — into per-request
// Samples plus the tool's own medians, and GradeExport compares it with
// the log: each metric's median and p99 against the truth's, the tool's
// own median reproduced (with its own quantile definition) as the proof
// the export was read right, and the requests lost or double-counted.
package calibrate
