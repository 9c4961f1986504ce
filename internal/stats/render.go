package stats

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchunit"
)

// Formats accepted by Write.
var Formats = []string{"text", "markdown", "json", "csv"}

// Write renders rep in format (text, markdown, json or csv).
func (rep *Report) Write(w io.Writer, format string) error {
	switch format {
	case "text":
		return rep.writeText(w)
	case "markdown":
		return rep.writeMarkdown(w)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	case "csv":
		return rep.writeCSV(w)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// footnotes numbers distinct warnings across a report.
type footnotes struct {
	list []string
	idx  map[string]int
}

func (f *footnotes) mark(ws []string) string {
	if f.idx == nil {
		f.idx = map[string]int{}
	}
	var marks []string
	for _, w := range ws {
		i, ok := f.idx[w]
		if !ok {
			f.list = append(f.list, w)
			i = len(f.list)
			f.idx[w] = i
		}
		marks = append(marks, "["+strconv.Itoa(i)+"]")
	}
	return strings.Join(marks, "")
}

// cellTexts returns the displayed texts of one row: per column the center
// ± CI and, after column 0, the delta and the p text.
func (t *Table) cellTexts(r *Row, notes *footnotes) []string {
	var centers []float64
	for _, c := range r.Cells {
		if c != nil {
			centers = append(centers, c.Center)
		}
	}
	sc := benchunit.CommonScale(centers, benchunit.ClassOf(t.Unit))
	var out []string
	for j, c := range r.Cells {
		switch {
		case c == nil:
			out = append(out, "—")
		default:
			out = append(out, sc.Format(c.Center)+" ± "+c.CIPct()+notes.mark(c.Warnings))
		}
		if j == 0 {
			continue
		}
		if c == nil || !c.HasBase {
			out = append(out, "", "")
			continue
		}
		out = append(out, c.Delta, "("+c.PText()+")")
	}
	return out
}

func (t *Table) geomeanTexts(notes *footnotes) []string {
	var out []string
	for j, g := range t.Geomean {
		s := ""
		if g.HasSummary {
			s = benchunit.Scale(g.Summary, benchunit.ClassOf(t.Unit))
		}
		out = append(out, s+notes.mark(g.Warnings))
		if j > 0 {
			out = append(out, g.DeltaPct(), "")
		}
	}
	return out
}

func (t *Table) header() []string {
	h := []string{"benchmark"}
	for j, c := range t.Columns {
		h = append(h, c+" "+t.Unit)
		if j > 0 {
			h = append(h, "vs base", "p")
		}
	}
	return h
}

func configLine(t *Table) string {
	var parts []string
	for _, kv := range t.Config {
		if kv.Value != "" {
			parts = append(parts, kv.Key+": "+strings.TrimSpace(kv.Value))
		}
	}
	return strings.Join(parts, "  ")
}

func (rep *Report) writeText(w io.Writer) error {
	var notes footnotes
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	prevConfig := ""
	for i, t := range rep.Tables {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		if c := configLine(t); c != prevConfig {
			fmt.Fprintln(tw, c)
			prevConfig = c
		}
		fmt.Fprintln(tw, strings.Join(t.header(), "\t"))
		for _, r := range t.Rows {
			fmt.Fprintln(tw, r.Name+"\t"+strings.Join(t.cellTexts(r, &notes), "\t"))
		}
		if len(t.Rows) > 1 {
			fmt.Fprintln(tw, "geomean\t"+strings.Join(t.geomeanTexts(&notes), "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeNotes(w, notes, "")
}

func writeNotes(w io.Writer, notes footnotes, prefix string) error {
	for i, n := range notes.list {
		if _, err := fmt.Fprintf(w, "%s[%d] %s\n", prefix, i+1, n); err != nil {
			return err
		}
	}
	return nil
}

func (rep *Report) writeMarkdown(w io.Writer) error {
	var notes footnotes
	for _, t := range rep.Tables {
		if c := configLine(t); c != "" {
			fmt.Fprintf(w, "%s\n\n", c)
		}
		h := t.header()
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat(" --- |", len(h)))
		for _, r := range t.Rows {
			fmt.Fprintf(w, "| %s | %s |\n", mdEscape(r.Name), strings.Join(t.cellTexts(r, &notes), " | "))
		}
		if len(t.Rows) > 1 {
			fmt.Fprintf(w, "| **geomean** | %s |\n", strings.Join(t.geomeanTexts(&notes), " | "))
		}
		fmt.Fprintln(w)
	}
	if len(notes.list) > 0 {
		fmt.Fprintln(w, "Warnings:")
		fmt.Fprintln(w)
	}
	return writeNotes(w, notes, "- ")
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// writeCSV writes one line per benchmark and column (long format).
func (rep *Report) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"config", "unit", "benchmark", "column", "n", "center", "lo", "hi", "ci", "vs_base", "ratio", "p", "warnings"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, t := range rep.Tables {
		for _, r := range t.Rows {
			for j, c := range r.Cells {
				if c == nil {
					continue
				}
				rec := []string{configLine(t), t.Unit, r.Name, t.Columns[j], strconv.Itoa(len(c.Values)),
					f(c.Center), f(c.Lo), f(c.Hi), c.CIPct(), "", "", "", strings.Join(c.Warnings, "; ")}
				if c.HasBase {
					rec[9], rec[10], rec[11] = c.Delta, f(c.Ratio), f(c.P)
				}
				cw.Write(rec)
			}
		}
		for j, g := range t.Geomean {
			rec := []string{configLine(t), t.Unit, "geomean", t.Columns[j], "", "", "", "", "", "", "", "", strings.Join(g.Warnings, "; ")}
			if g.HasSummary {
				rec[5] = f(g.Summary)
			}
			if j > 0 && g.HasRatio {
				rec[9], rec[10] = g.DeltaPct(), f(g.Ratio)
			}
			if rec[5] != "" || rec[9] != "" {
				cw.Write(rec)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
