package run

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
)

// writeTable prints the end-of-run table: one row per phase and type, then
// the totals and the validity verdict. markdown selects a Markdown table.
func writeTable(w io.Writer, run *record.Run, spec workload.Spec, o workload.Outcome, markdown bool) {
	cols := []string{phaseKey(spec), "type", "count", "errors", "p50 E2E ms", "p99 E2E ms",
		"p99 TTFT ms", "goodput req/s", "SLO attainment", "valid"}
	var rows [][]string
	for _, g := range configGroups(run.Summary.Groups, o.Phases) {
		ttft := "-"
		if g.TTFT.Count > 0 {
			ttft = fmt.Sprintf("%.1f", g.TTFT.P99)
		}
		phase := g.Labels[summary.LabelPhase]
		if phase == "" {
			phase = "-"
		}
		rows = append(rows, []string{phase, g.Labels[summary.LabelType], fmt.Sprint(g.Count), fmt.Sprint(g.Errors),
			fmt.Sprintf("%.1f", g.E2E.P50), fmt.Sprintf("%.1f", g.E2E.P99), ttft,
			fmt.Sprintf("%.2f", g.Goodput), fmt.Sprintf("%.1f%%", 100*g.SLOAttainment), phaseValid(run, phase)})
	}
	s := run.Summary
	rows = append(rows, []string{"all", "all", fmt.Sprint(s.Requests), fmt.Sprint(s.Failed),
		fmt.Sprintf("%.1f", s.E2E.P50), fmt.Sprintf("%.1f", s.E2E.P99), "-",
		fmt.Sprintf("%.2f", s.Goodput), fmt.Sprintf("%.1f%%", 100*s.SLOAttainment), yesNo(run.Valid)})
	if markdown {
		writeMarkdownTable(w, cols, rows)
	} else {
		fmt.Fprintf(w, "\n%s %s  %s  rep %d  seed %d\n", run.Workload, run.Name, run.RunID, run.Repetition, run.Seed)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "%s: %.3g %s\n", s.Primary.Name, s.Primary.Value, s.Primary.Unit)
	fmt.Fprintf(w, "schedule: target %.2f req/s, delivered %.2f req/s, lag p99 %.2f ms\n",
		s.TargetRate, s.DeliveredRate, s.ScheduleLag.P99)
	fmt.Fprintln(w, verdict(run))
	if o := s.HarnessOverhead; o != nil {
		fmt.Fprintf(w, "harness overhead (client − server time, %d requests): TTFT p50 %.3f / p99 %.3f ms, E2E p50 %.3f / p99 %.3f ms\n",
			o.E2E.Count, o.TTFT.P50, o.TTFT.P99, o.E2E.P50, o.E2E.P99)
	}
	if f := run.MeasurementFloor; f != nil && !markdown {
		fmt.Fprintf(w, "measurement floor: TTFT p99 error %.3f ms, E2E p99 error %.3f ms, rate %+.2f %% (goal %s)\n",
			f.TTFT.P99, f.E2E.P99, f.RateErrorPct, metNot(f.GoalMet))
	}
	if e := run.Environment; !run.Valid && e.Cores > 0 && e.LoadAvg1 > float64(e.Cores) {
		fmt.Fprintf(w, "hint: the load average was %.1f on %d cores when the run started; other processes may have delayed the driver\n",
			e.LoadAvg1, e.Cores)
	}
	for _, n := range run.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// phaseValid says whether the reasons of an invalid run spare phase: the
// reasons of one phase among several start with "phase NAME:".
func phaseValid(run *record.Run, phase string) string {
	for _, r := range run.InvalidReasons {
		if !strings.HasPrefix(r, "phase ") || strings.HasPrefix(r, "phase "+phase+":") {
			return "no"
		}
	}
	return "yes"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func verdict(run *record.Run) string {
	switch {
	case run.Valid:
		return "valid: yes"
	case !run.Complete:
		return "valid: no (incomplete) — " + strings.Join(run.InvalidReasons, "; ")
	}
	return "valid: NO — " + strings.Join(run.InvalidReasons, "; ")
}

func writeMarkdownTable(w io.Writer, cols []string, rows [][]string) {
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
}

// writeMarkdown renders summary.md.
func writeMarkdown(w io.Writer, run *record.Run, spec workload.Spec, o workload.Outcome) {
	fmt.Fprintf(w, "# %s %s — %s\n\n", run.Workload, run.Name, run.RunID)
	fmt.Fprintf(w, "%s\n\n", spec.Description)
	fmt.Fprintf(w, "- target: %s\n- backend: %s, repetition %d, seed %d, %s\n", run.Target, run.Backend,
		run.Repetition, run.Seed, run.LoadMode)
	fmt.Fprintf(w, "- started %s, ended %s (%.1f s measured)\n", run.StartedAt.UTC().Format("2006-01-02 15:04:05Z"),
		run.EndedAt.UTC().Format("15:04:05Z"), run.Summary.DurationSeconds)
	fmt.Fprintf(w, "- complete: %v\n- config_hash: `%s`\n\n", run.Complete, run.ConfigHash)
	fmt.Fprintf(w, "## Results (latencies in ms; E2E and TTFT from the intended send)\n\n")
	writeTable(w, run, spec, o, true)
	writeFloor(w, run, o)
	fmt.Fprintf(w, "\n## Environment\n\n%s %s/%s, %s, %d cores, %d MiB, sagebench %s (%s)\n",
		run.Environment.GoVersion, run.Environment.OS, run.Environment.Arch, run.Environment.CPUModel,
		run.Environment.Cores, run.Environment.MemoryMiB, run.Environment.Version, run.Environment.Commit)
}

// writeAggregate prints the primary metric over the repetitions (median,
// min, max) and how many were valid, when there are several.
func writeAggregate(w io.Writer, spec workload.Spec, results []Result) {
	if len(results) < 2 || w == nil {
		return
	}
	var vals []float64
	valid := 0
	for _, r := range results {
		vals = append(vals, r.Run.Summary.Primary.Value)
		if r.Run.Valid {
			valid++
		}
	}
	slices.Sort(vals)
	med := vals[len(vals)/2]
	if len(vals)%2 == 0 {
		med = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
	}
	p := results[0].Run.Summary.Primary
	fmt.Fprintf(w, "\n%s %s over %d repetitions: %s median %.3g %s (min %.3g, max %.3g); valid %d/%d\n",
		spec.ID, spec.Name, len(results), p.Name, med, p.Unit, vals[0], vals[len(vals)-1], valid, len(results))
}
