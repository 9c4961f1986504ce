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
	fmt.Fprintf(&s, "# Leaderboard\n\nValid runs only, grouped by configuration: workload, backend, nodes, parallelism, config hash and, for runs that report several configurations, that configuration. "+
		"A configuration is named by its Q, its scale and the run_config keys that differ between the configurations of that Q. "+
		"Each cell is the mean over repetitions ± half its %g %% Student t interval (aggregate.Of: only measured values enter a mean; no interval from one repetition); – where nothing was measured.\n", 100*b.Confidence)
	for _, q := range b.workloads() {
		b.markdownQ(&s, q)
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
	for _, p := range b.Problems {
		fmt.Fprintf(&s, "\nUnreadable: %s\n", md(p))
	}
	return s.String()
}

// workloads lists the Qs of the entries in order.
func (b *Board) workloads() []string {
	var out []string
	for _, e := range b.Entries {
		if len(out) == 0 || out[len(out)-1] != e.Workload {
			out = append(out, e.Workload)
		}
	}
	return out
}

// markdownQ writes one Q's tables: its configurations with their primary
// metric first, one table per primary metric (name and unit), so that a
// column holds one metric in one unit (Q4's per-pool-size rows report
// their max rate in req/s, the run its scaling efficiency ×).
func (b *Board) markdownQ(s *strings.Builder, q string) {
	var entries []Entry
	for _, e := range b.Entries {
		if e.Workload == q {
			entries = append(entries, e)
		}
	}
	fmt.Fprintf(s, "\n## %s\n\n", md(strings.TrimSpace(q+" "+entries[0].Name)))
	groups := byPrimary(entries)
	for i, g := range groups {
		if i > 0 {
			s.WriteString("\n")
		}
		markdownTable(s, g)
	}
}

// byPrimary splits entries by their primary metric's name and unit, in
// order of appearance; entries without one join the first group.
func byPrimary(entries []Entry) [][]Entry {
	var keys []string
	groups := map[string][]Entry{}
	var none []Entry
	for _, e := range entries {
		if e.Primary == nil {
			none = append(none, e)
			continue
		}
		k := e.Primary.Name + "\x00" + e.Primary.Unit
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], e)
	}
	if len(keys) == 0 {
		return [][]Entry{none}
	}
	out := make([][]Entry, len(keys))
	for i, k := range keys {
		out[i] = groups[k]
	}
	out[0] = append(out[0], none...)
	return out
}

// markdownTable writes one table of entries that share a primary metric.
func markdownTable(s *strings.Builder, entries []Entry) {
	primary := primaryOf(entries)
	col := "primary"
	if primary != nil {
		col = primary.Name + " " + unitLabel(primary.Unit)
		fmt.Fprintf(s, "Primary metric: %s (%s, %s is better).\n\n", md(primary.Name), primary.Unit, primary.Direction)
	}
	fmt.Fprintf(s, "| configuration | backend | nodes | par. | reps | %s | throughput req/s | p50 ms | p95 ms | p99 ms | success %% |\n", md(col))
	s.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	dups := false
	for _, e := range entries {
		reps := strconv.Itoa(e.Reps)
		if len(e.Duplicates) > 0 {
			reps, dups = reps+" †", true
		}
		fmt.Fprintf(s, "| %s | %s | %d | %d | %s | %s |", md(e.Label), md(e.Backend), e.Nodes, e.Parallelism, reps, md(cellText(e.Primary)))
		for _, m := range Metrics {
			v := e.Values[m.Name()]
			fmt.Fprintf(s, " %s |", cellText(&v))
		}
		s.WriteString("\n")
	}
	if dups {
		s.WriteString("\n† a run repeating an earlier run's seed and configuration: the same sample again, flagged and left out of the estimates, not counted as a repetition:\n")
		for _, e := range entries {
			for _, d := range e.Duplicates {
				fmt.Fprintf(s, "- %s: %s\n", md(e.Label), md(d))
			}
		}
	}
}

// primaryOf is the primary metric the entries of a Q report (nil when
// none does).
func primaryOf(entries []Entry) *aggregate.Estimate {
	for _, e := range entries {
		if e.Primary != nil {
			return e.Primary
		}
	}
	return nil
}

// unitLabel is a column's unit: "(ms)", "(%)" for a fraction.
func unitLabel(unit string) string {
	switch unit {
	case result.Fraction:
		return "(%)"
	case "":
		return ""
	}
	return "(" + unit + ")"
}

// cellText is an estimate in a column that states its unit: mean ±
// half-interval, the mean alone (one repetition), a bracket, "never" or
// "–".
func cellText(e *aggregate.Estimate) string {
	if e == nil {
		return "–"
	}
	m := e.Metric()
	s := result.Mean(m)
	for _, suf := range []string{" " + m.Unit, " %", "×"} {
		s = strings.TrimSuffix(s, suf)
	}
	return s
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

func ptr(v *float64) string {
	if v == nil {
		return "–"
	}
	return result.Number(*v)
}

func (b *Board) csv(w io.Writer) error {
	cw := csv.NewWriter(w)
	hdr := []string{"status", "workload", "label", "scale", "backend", "nodes", "parallelism", "config_hash", "config", "repetitions", "duplicates", "run_ids",
		"primary_metric", "primary_state", "primary_mean", "primary_lo", "primary_hi"}
	for _, m := range Metrics {
		hdr = append(hdr, m.Name()+"_mean", m.Name()+"_lo", m.Name()+"_hi")
	}
	cw.Write(append(hdr, "invalid_reasons"))
	for _, e := range b.Entries {
		row := []string{"valid", e.Workload, e.Label, e.Scale, e.Backend, strconv.Itoa(e.Nodes), strconv.Itoa(e.Parallelism), e.ConfigHash, e.Config, strconv.Itoa(e.Reps),
			strconv.Itoa(len(e.Duplicates)), strings.Join(e.RunIDs, " ")}
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
		row := []string{"invalid", r.Workload, "", "", r.Backend, strconv.Itoa(r.Nodes), strconv.Itoa(r.Parallelism), r.ConfigHash, r.Config, "1", "0", r.RunID,
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
