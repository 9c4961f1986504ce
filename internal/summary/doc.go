// Package summary turns the request records of a run into its metrics.
// A Collector takes record.Requests as they complete (concurrently), keeps
// HDR histograms (microsecond resolution, 3 significant figures) per group
// of requests sharing a type, tenant, priority, phase, or phase and type,
// and at the end Summarize folds them with the phases' timing into a
// record.Summary: latency percentiles (E2E and TTFT from the intended send,
// service time from the actual send, TPOT, ITL from per-token times), SLO
// attainment, goodput, delivered rate and schedule lag. Check applies the
// Validity rules to that summary and says why a run is invalid.
package summary
