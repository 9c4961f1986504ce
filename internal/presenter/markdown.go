package presenter

import (
	"fmt"
	"io"

	"github.com/sagebench/sagebench/internal/result"
)

// Markdown renders summary.md: the answer first, then validity and
// targets, the tables behind the answer, the drill's events, every
// metric with its state, the per-phase table, the measurement floor and
// the environment.
func Markdown(w io.Writer, r Run) {
	run := r.Record
	fmt.Fprintf(w, "# %s %s — %s\n\n", run.Workload, run.Name, run.RunID)
	fmt.Fprintf(w, "**Answer:** %s\n\n", r.answer())
	fmt.Fprintf(w, "**%s**", Verdict(run))
	if res := run.Result; res != nil {
		for _, v := range res.Targets {
			fmt.Fprintf(w, "  \n**Target %s:** %s", metMissed(v), v.Reason)
		}
	}
	fmt.Fprintf(w, "\n\n%s\n\n", r.Spec.Description)
	fmt.Fprintf(w, "- target: %s\n- backend: %s, repetition %d, seed %d, %s\n", run.Target, run.Backend,
		run.Repetition, run.Seed, run.LoadMode)
	fmt.Fprintf(w, "- started %s, ended %s (%.1f s measured)\n", run.StartedAt.UTC().Format("2006-01-02 15:04:05Z"),
		run.EndedAt.UTC().Format("15:04:05Z"), run.Summary.DurationSeconds)
	fmt.Fprintf(w, "- complete: %v\n- config_hash: `%s`\n", run.Complete, run.ConfigHash)
	for _, n := range run.Notes {
		fmt.Fprintf(w, "- note: %s\n", n)
	}
	if res := run.Result; res != nil {
		writeResultTables(w, res, true)
		fmt.Fprintf(w, "\n## Metrics\n\n")
		WriteTable(w, MetricTable(res.Metrics), true)
	}
	fmt.Fprintf(w, "\n## Requests per phase (latencies in ms; E2E and TTFT from the intended send; a failed request counts +∞)\n\n")
	cols, rows := r.phaseRows()
	writeMarkdownTable(w, cols, rows)
	schedule(w, run.Summary)
	overhead(w, run.Summary)
	retries(w, run.Summary)
	writeFloor(w, r)
	e := run.Environment
	fmt.Fprintf(w, "\n## Environment\n\n%s %s/%s, %s, %d cores, %d MiB, sagebench %s (%s)\n",
		e.GoVersion, e.OS, e.Arch, e.CPUModel, e.Cores, e.MemoryMiB, e.Version, e.Commit)
}

// MetricTable lists metrics with their state, value, samples and reason.
func MetricTable(ms []result.Metric) result.Table {
	t := result.Table{Title: "Metrics", Columns: []string{"metric", "value", "state", "n", "note"}}
	for _, m := range ms {
		n := "-"
		if m.N > 0 {
			n = fmt.Sprint(m.N)
		}
		value := result.Short(m)
		if m.State == result.Measured && m.Interval != nil {
			value = result.Format(m)
		}
		t.AddRow(result.Text(m.Name), result.Text(value), result.Text(string(m.State)), result.Text(n), result.Text(m.Reason))
	}
	return t
}
