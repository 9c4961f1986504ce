package presenter

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// EndTable prints the end of a repetition on the terminal: the answer
// sentence, the table per phase and type, the primary metric and the
// targets, the schedule, the validity verdict, the notes and the tables
// behind the answer. An invalid run says so before its answer.
func EndTable(w io.Writer, r Run) {
	run := r.Record
	fmt.Fprintf(w, "\n%s %s  %s  rep %d  seed %d\n", run.Workload, run.Name, run.RunID, run.Repetition, run.Seed)
	if !run.Valid {
		fmt.Fprintln(w, Verdict(run))
	}
	fmt.Fprintf(w, "answer: %s\n", r.answer())
	cols, rows := r.phaseRows()
	writeText(w, cols, rows)
	r.verdictLines(w)
	for _, n := range run.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if res := run.Result; res != nil {
		writeResultTables(w, res, false)
	}
}

// writeResultTables writes the result's tables and its drill events, each
// under its title (a Markdown heading when markdown).
func writeResultTables(w io.Writer, res *result.Result, markdown bool) {
	tables := res.Tables
	if len(res.Events) > 0 {
		tables = append(tables[:len(tables):len(tables)], EventTable(res.Events))
	}
	for _, t := range tables {
		if markdown {
			fmt.Fprintf(w, "\n## %s\n\n", t.Title)
		} else {
			fmt.Fprintf(w, "\n%s\n", t.Title)
		}
		WriteTable(w, t, markdown)
	}
}

// verdictLines prints the primary metric, the targets, the schedule, the
// validity verdict and what the harness knows of its own error.
func (r Run) verdictLines(w io.Writer) {
	run, s := r.Record, r.Record.Summary
	if res := run.Result; res != nil {
		line := fmt.Sprintf("primary %s: %s", res.Primary.Name, result.Format(res.Primary))
		if res.Primary.State == result.Measured && res.Primary.Reason != "" {
			line += " (" + res.Primary.Reason + ")"
		}
		fmt.Fprintln(w, line)
		for _, v := range res.Targets {
			fmt.Fprintf(w, "target %s: %s\n", metMissed(v), v.Reason)
		}
	}
	schedule(w, s)
	if run.Valid { // an invalid run's verdict leads the table
		fmt.Fprintln(w, Verdict(run))
	}
	overhead(w, s)
	retries(w, s)
	if f := run.MeasurementFloor; f != nil {
		fmt.Fprintf(w, "measurement floor: TTFT p99 error %s ms, E2E p99 error %s ms, rate %+.2f %% (goal %s)\n",
			floorP99(f.TTFT, f.Failed), floorP99(f.E2E, f.Failed),
			f.RateErrorPct, metNot(f.GoalMet))
	}
	if e := run.Environment; !run.Valid && e.Cores > 0 && e.LoadAvg1 > float64(e.Cores) {
		fmt.Fprintf(w, "hint: the load average was %.1f on %d cores when the run started; other processes may have delayed the driver\n",
			e.LoadAvg1, e.Cores)
	}
}

// schedule writes the schedule line of s.
func schedule(w io.Writer, s record.Summary) {
	fmt.Fprintf(w, "schedule: target %.2f req/s, delivered %.2f req/s, lag p99 %.2f ms\n",
		s.TargetRate, s.DeliveredRate, s.ScheduleLag.P99)
}

// overhead writes the harness overhead line of s, when it has one.
func overhead(w io.Writer, s record.Summary) {
	if o := s.HarnessOverhead; o != nil {
		fmt.Fprintf(w, "harness overhead (client − server time, %d requests): TTFT p50 %.3f / p99 %.3f ms, E2E p50 %.3f / p99 %.3f ms\n",
			o.E2E.Count, o.TTFT.P50, o.TTFT.P99, o.E2E.P50, o.E2E.P99)
	}
}

// retries writes what the client's retry policy did, when a request was
// sent more than once: the load it added and what it bought.
func retries(w io.Writer, s record.Summary) {
	r := s.Retry
	if r == nil {
		return
	}
	fmt.Fprintf(w, "retries: %d attempts for %d requests (amplification %.2f×, %d retried, %d transport replays); goodput %.2f req/s, %.2f without retries; user-seen latency, successes only, p50 %.1f / p99 %.1f ms\n",
		r.Attempts, r.Requests, r.Amplification, r.Retried, r.TransportReplays, r.Goodput, r.GoodputWithoutRetries,
		r.UserLatency.P50, r.UserLatency.P99)
}

// phaseRows is the table of one row per phase and type, then the totals.
func (r Run) phaseRows() ([]string, [][]string) {
	run := r.Record
	cols := []string{r.phaseKey(), "type", "count", "errors", "p50 E2E ms", "p99 E2E ms",
		"p99 TTFT ms", "goodput req/s", "SLO attainment", "valid"}
	var rows [][]string
	for _, g := range r.configGroups() {
		phase := g.Labels[summary.LabelPhase]
		if phase == "" {
			phase = "-"
		}
		rows = append(rows, []string{phase, g.Labels[summary.LabelType], fmt.Sprint(g.Count), fmt.Sprint(g.Errors),
			tailCell(tail(0.5, g.E2E, g.Count)), tailCell(tail(0.99, g.E2E, g.Count)), tailCell(groupTTFT(0.99, g)),
			fmt.Sprintf("%.2f", g.Goodput), fmt.Sprintf("%.1f%%", 100*g.SLOAttainment), phaseValid(run, phase)})
	}
	s := run.Summary
	rows = append(rows, []string{"all", "all", fmt.Sprint(s.Requests), fmt.Sprint(s.Failed),
		tailCell(tail(0.5, s.E2E, s.Requests)), tailCell(tail(0.99, s.E2E, s.Requests)), "-",
		fmt.Sprintf("%.2f", s.Goodput), fmt.Sprintf("%.1f%%", 100*s.SLOAttainment), yesNo(run.Valid)})
	return cols, rows
}

// WriteTable renders t as aligned text or Markdown.
func WriteTable(w io.Writer, t result.Table, markdown bool) {
	rows := make([][]string, len(t.Rows))
	for i, row := range t.Rows {
		for _, c := range row {
			rows[i] = append(rows[i], cellText(c))
		}
	}
	if markdown {
		writeMarkdownTable(w, t.Columns, rows)
	} else {
		writeText(w, t.Columns, rows)
	}
	if t.Note != "" {
		fmt.Fprintln(w, t.Note)
	}
}

func cellText(c result.Cell) string {
	if c.Metric != nil {
		return result.Short(*c.Metric)
	}
	return c.Text
}

// EventTable is the table of a drill's events: when, what, the outcome
// and each event's metrics.
func EventTable(events []result.Event) result.Table {
	t := result.Table{Title: "Events", Columns: []string{"seq", "at", "event", "outcome", "after it"}}
	for _, e := range events {
		at := "-"
		if e.AtS != nil {
			at = fmt.Sprintf("%.2f s", *e.AtS)
		}
		var ms []string
		for _, m := range e.Metrics {
			s := m.Name + " " + result.Short(m)
			if m.State != result.Measured && m.Reason != "" {
				s = m.Name + " " + string(m.State) + ": " + m.Reason
			}
			ms = append(ms, s)
		}
		t.AddRow(result.Textf("%d", e.Seq), result.Text(at), result.Text(strings.TrimSpace(e.Action+" "+e.Target)),
			result.Text(e.Outcome), result.Text(strings.Join(ms, "; ")))
	}
	return t
}

func writeText(w io.Writer, cols []string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	tw.Flush()
}

// writeMarkdownTable writes a Markdown table, escaping | in cells (into
// a copy: the caller's columns and rows, a result's own, stay as they are).
func writeMarkdownTable(w io.Writer, cols []string, rows [][]string) {
	line := func(cells []string) string {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		return "| " + strings.Join(esc, " | ") + " |\n"
	}
	fmt.Fprintf(w, "%s|%s\n", line(cols), strings.Repeat("---|", len(cols)))
	for _, r := range rows {
		fmt.Fprint(w, line(r))
	}
	fmt.Fprintln(w)
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

func metMissed(v result.Verdict) string {
	switch {
	case v.Met:
		return "met"
	case v.Outcome == result.Inconclusive:
		return "INCONCLUSIVE"
	}
	return "MISSED"
}

func metNot(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// Verdict is the validity line of a run.
func Verdict(run *record.Run) string {
	switch {
	case run.Valid:
		return "valid: yes"
	case !run.Complete:
		return "valid: no (incomplete) — " + strings.Join(run.InvalidReasons, "; ")
	}
	return "valid: NO — " + strings.Join(run.InvalidReasons, "; ")
}
