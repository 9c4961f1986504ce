package leaderboard

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
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
	fmt.Fprintf(&s, "# Leaderboard\n\nValid runs only, grouped by workload, backend, nodes, parallelism and config hash; mean ± %g%% t interval over repetitions (none with one repetition).\n\n", 100*b.Confidence)
	s.WriteString("| workload | backend | nodes | par. | config | reps | throughput req/s | p50 ms | p95 ms | p99 ms | success |\n")
	s.WriteString("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, e := range b.Entries {
		fmt.Fprintf(&s, "| %s | %s | %d | %d | %s | %d |", md(e.Workload), md(e.Backend), e.Nodes, e.Parallelism, md(e.ConfigHash), e.Reps)
		for _, m := range Metrics {
			fmt.Fprintf(&s, " %s |", e.Values[m.Name].String())
		}
		s.WriteString("\n")
	}
	b.markdownComparisons(&s)
	b.markdownInvalid(&s)
	if b.Duplicates > 0 {
		fmt.Fprintf(&s, "\n%d duplicate rows (a run_id seen before) were left out.\n", b.Duplicates)
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
	fmt.Fprintf(s, "\n## Backends compared\n\nSame workload, nodes, parallelism and seeds; Welch t-test, significant below p = %g (\"~\": no significant difference).\n\n", b.Alpha)
	s.WriteString("| workload | nodes | par. | base | other | seeds | metric | base mean | other mean | delta | p | better |\n")
	s.WriteString("|---|---:|---:|---|---|---|---|---:|---:|---:|---:|---|\n")
	for _, c := range b.Comparisons {
		for _, d := range c.Metrics {
			better := "~"
			if d.Significant {
				better = d.Better
			}
			fmt.Fprintf(s, "| %s | %d | %d | %s | %s | %s | %s | %.4g | %.4g | %+.1f%% | %.3g | %s |\n",
				md(c.Workload), c.Nodes, c.Parallelism, md(c.Base), md(c.Other), seedList(c.Seeds), d.Metric, d.Base, d.Other, d.DeltaPct, d.P, md(better))
		}
	}
}

func (b *Board) markdownInvalid(s *strings.Builder) {
	if len(b.Invalid) == 0 {
		return
	}
	s.WriteString("\n## Invalid runs (not averaged)\n\n| run_id | workload | backend | throughput req/s | p99 ms | reasons |\n|---|---|---|---:|---:|---|\n")
	for _, r := range b.Invalid {
		fmt.Fprintf(s, "| %s | %s | %s | %.4g | %.4g | %s |\n", md(r.RunID), md(r.Workload), md(r.Backend), r.Throughput, r.LatencyP99, md(strings.Join(r.Reasons, "; ")))
	}
}

// String renders mean ± half-width (or the mean alone).
func (e Estimate) String() string {
	if e.Lo == nil || e.Hi == nil {
		return fmt.Sprintf("%.4g", e.Mean)
	}
	return fmt.Sprintf("%.4g ± %.2g", e.Mean, (*e.Hi-*e.Lo)/2)
}

func (b *Board) csv(w io.Writer) error {
	cw := csv.NewWriter(w)
	hdr := []string{"status", "workload", "backend", "nodes", "parallelism", "config_hash", "repetitions", "run_ids"}
	for _, m := range Metrics {
		hdr = append(hdr, m.Name+"_mean", m.Name+"_lo", m.Name+"_hi")
	}
	cw.Write(append(hdr, "invalid_reasons"))
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, e := range b.Entries {
		row := []string{"valid", e.Workload, e.Backend, strconv.Itoa(e.Nodes), strconv.Itoa(e.Parallelism), e.ConfigHash, strconv.Itoa(e.Reps), strings.Join(e.RunIDs, " ")}
		for _, m := range Metrics {
			est := e.Values[m.Name]
			lo, hi := "", ""
			if est.Lo != nil {
				lo, hi = f(*est.Lo), f(*est.Hi)
			}
			row = append(row, f(est.Mean), lo, hi)
		}
		cw.Write(append(row, ""))
	}
	for _, r := range b.Invalid {
		row := []string{"invalid", r.Workload, r.Backend, strconv.Itoa(r.Nodes), strconv.Itoa(r.Parallelism), r.ConfigHash, "1", r.RunID}
		for _, m := range Metrics {
			row = append(row, f(m.Of(r)), "", "")
		}
		cw.Write(append(row, strings.Join(r.Reasons, "; ")))
	}
	cw.Flush()
	return cw.Error()
}

func seedList(seeds []int64) string {
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatInt(s, 10)
	}
	return strings.Join(parts, ",")
}

func md(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }
