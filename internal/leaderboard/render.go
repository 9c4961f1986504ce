package leaderboard

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// Formats accepted by Write.
var Formats = []string{"markdown", "csv", "json"}

// Write renders b as markdown, csv or json.
func (b *Board) Write(w io.Writer, format string) error {
	switch format {
	case "markdown", "md":
		_, err := io.WriteString(w, b.markdown())
		return err
	case "csv":
		return b.csv(w)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	}
	return fmt.Errorf("format %q: want one of %s", format, strings.Join(Formats, ", "))
}

func (b *Board) markdown() string {
	var s strings.Builder
	fmt.Fprintf(&s, "# Leaderboard\n\nValid runs only, grouped by workload, backend, nodes, parallelism and config hash; mean ± half the %g %% interval over repetitions (aggregate.Of: only measured values enter a mean; none with one repetition; – where nothing was measured).\n\n", 100*b.Confidence)
	s.WriteString("| workload | backend | nodes | par. | config | reps | primary | throughput req/s | p50 ms | p95 ms | p99 ms | success |\n")
	s.WriteString("|---|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|\n")
	for _, e := range b.Entries {
		fmt.Fprintf(&s, "| %s | %s | %d | %d | %s | %d | %s |", md(e.Workload), md(e.Backend), e.Nodes, e.Parallelism, md(withConfig(e.ConfigHash, e.Config)), e.Reps, md(primaryText(e.Primary)))
		for _, m := range Metrics {
			fmt.Fprintf(&s, " %s |", estimateText(e.Values[m.Name()], false))
		}
		s.WriteString("\n")
	}
	b.markdownComparisons(&s)
	for _, r := range b.Refused {
		fmt.Fprintf(&s, "\nNot compared: %s\n", md(r))
	}
	b.markdownInvalid(&s)
	if b.Aggregates > 0 {
		fmt.Fprintf(&s, "\n%d aggregate rows (metadata.aggregate: a summary of repetitions listed here one by one) were left out.\n", b.Aggregates)
	}
	if b.Duplicates > 0 {
		fmt.Fprintf(&s, "\n%d duplicate rows (a run_id seen before) were left out.\n", b.Duplicates)
	}
	for _, e := range b.Entries {
		for _, d := range e.Duplicates {
			fmt.Fprintf(&s, "\nSame seed again, left out of the estimates: %s\n", md(d))
		}
	}
	for _, p := range b.Problems {
		fmt.Fprintf(&s, "\nUnreadable: %s\n", md(p))
	}
	return s.String()
}

func (b *Board) markdownComparisons(s *strings.Builder) {
	if len(b.Comparisons) == 0 {
		return
	}
	fmt.Fprintf(s, "\n## Backends compared\n\nSame workload (workload_hash), nodes and seeds; Welch t-test, significant below p = %g (\"~\": no significant difference).\n\n", b.Alpha)
	s.WriteString("| workload | nodes | base | other | seeds | metric | base mean | other mean | delta | p | better |\n")
	s.WriteString("|---|---:|---|---|---|---|---:|---:|---:|---:|---|\n")
	for _, c := range b.Comparisons {
		for _, d := range c.Metrics {
			better := "~"
			if d.Significant {
				better = d.Better
			}
			fmt.Fprintf(s, "| %s | %d | %s | %s | %s | %s | %s | %s | %+.1f %% | %.3f | %s |\n",
				md(withConfig(c.Workload, c.Config)), c.Nodes, md(c.Base), md(c.Other), seedList(c.Seeds), d.Metric,
				result.FormatValue(d.Base, d.Unit), result.FormatValue(d.Other, d.Unit), d.DeltaPct, d.P, md(better))
		}
	}
}

func (b *Board) markdownInvalid(s *strings.Builder) {
	if len(b.Invalid) == 0 {
		return
	}
	s.WriteString("\n## Invalid runs (not averaged)\n\n| run_id | workload | backend | throughput req/s | p99 ms | reasons |\n|---|---|---|---:|---:|---|\n")
	for _, r := range b.Invalid {
		fmt.Fprintf(s, "| %s | %s | %s | %s | %s | %s |\n", md(r.RunID), md(r.Workload), md(r.Backend), ptr(r.Throughput), ptr(r.LatencyP99), md(strings.Join(r.Reasons, "; ")))
	}
}

// estimateText renders mean ± half-width (or the mean alone, or the
// estimate's state), with the unit when withUnit.
func estimateText(e aggregate.Estimate, withUnit bool) string {
	if e.State != result.Measured || e.Mean == nil {
		if e.State == result.Bound && e.Interval != nil {
			return result.Short(e.Metric())
		}
		if e.State == result.Never {
			return "never"
		}
		return "–"
	}
	unit := e.Unit
	if !withUnit && unit != result.Fraction && unit != result.Ratio && unit != result.Percent {
		unit = "" // the column names the unit
	}
	v := result.FormatValue(*e.Mean, unit)
	if unit == "" {
		v = result.Number(*e.Mean)
	}
	if e.Interval == nil {
		return v
	}
	h := (e.Interval[1] - e.Interval[0]) / 2
	hs := result.Number(h)
	if e.Unit == result.Fraction {
		hs = strings.TrimSuffix(result.FormatValue(h, result.Fraction), " %") + " pp"
	}
	return v + " ± " + hs
}

// primaryText is the primary metric's name and estimate.
func primaryText(e *aggregate.Estimate) string {
	if e == nil {
		return "–"
	}
	return e.Name + " " + estimateText(*e, true)
}

func ptr(v *float64) string {
	if v == nil {
		return "–"
	}
	return result.Number(*v)
}

func (b *Board) csv(w io.Writer) error {
	cw := csv.NewWriter(w)
	hdr := []string{"status", "workload", "backend", "nodes", "parallelism", "config_hash", "config", "repetitions", "run_ids",
		"primary_metric", "primary_state", "primary_mean", "primary_lo", "primary_hi"}
	for _, m := range Metrics {
		hdr = append(hdr, m.Name()+"_mean", m.Name()+"_lo", m.Name()+"_hi")
	}
	cw.Write(append(hdr, "invalid_reasons"))
	for _, e := range b.Entries {
		row := []string{"valid", e.Workload, e.Backend, strconv.Itoa(e.Nodes), strconv.Itoa(e.Parallelism), e.ConfigHash, e.Config, strconv.Itoa(e.Reps), strings.Join(e.RunIDs, " ")}
		if p := e.Primary; p != nil {
			row = append(row, p.Name, string(p.State))
			row = append(row, estimateCells(*p)...)
		} else {
			row = append(row, "", "", "", "", "")
		}
		for _, m := range Metrics {
			row = append(row, estimateCells(e.Values[m.Name()])...)
		}
		cw.Write(append(row, ""))
	}
	for _, r := range b.Invalid {
		row := []string{"invalid", r.Workload, r.Backend, strconv.Itoa(r.Nodes), strconv.Itoa(r.Parallelism), r.ConfigHash, r.Config, "1", r.RunID,
			r.PrimaryMetric, r.PrimaryState, cellOf(r.PrimaryValue), cellOf(r.PrimaryLo), cellOf(r.PrimaryHi)}
		for _, m := range Metrics {
			row = append(row, cellOf(m.Of(r)), "", "")
		}
		cw.Write(append(row, strings.Join(r.Reasons, "; ")))
	}
	cw.Flush()
	return cw.Error()
}

// estimateCells are the mean, low and high of e for CSV (empty when
// absent).
func estimateCells(e aggregate.Estimate) []string {
	lo, hi := "", ""
	if e.Interval != nil {
		lo, hi = cellOf(record.F(e.Interval[0])), cellOf(record.F(e.Interval[1]))
	}
	return []string{cellOf(e.Mean), lo, hi}
}

func cellOf(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// withConfig appends the configuration name, when the row is one
// configuration of a run (e.g. "ab12 engines=2").
func withConfig(hash, config string) string {
	if config == "" {
		return hash
	}
	return hash + " " + config
}

func seedList(seeds []int64) string {
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatInt(s, 10)
	}
	return strings.Join(parts, ",")
}

func md(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }
