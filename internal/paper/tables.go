package paper

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/answer"
	"github.com/sagebench/sagebench/internal/result"
)

// Table is a table of text for LaTeX and Markdown.
type Table struct {
	Label   string // LaTeX label: tab:LABEL
	Caption string
	Columns []string
	Numeric []bool // right-aligned columns
	Rows    [][]string
}

// summaryMetrics are the run-level columns of a Q's summary table, after
// its primary metric.
var summaryMetrics = []string{"goodput", "throughput", "slo_attainment", "e2e_p99_ms"}

// writeTables writes a Q's summary table and each cell's pooled answer
// table (from cols, the cells' answer columns renderQ built), as LaTeX
// and Markdown.
func writeTables(e *Experiment, w *writer, q string, cells []*Cell, cols []answer.Column) error {
	stem := strings.ToLower(q)
	sum := summaryTable(e, q, cells)
	if err := writeTable(w, filepath.Join("tables", stem+"-summary"), q, sum, cells); err != nil {
		return err
	}
	for i, c := range cells {
		t, ok := answerSource(q, cols[i].Result)
		if !ok {
			continue
		}
		name := fmt.Sprintf("%s-%s", stem, slug(t.Title))
		if len(cells) > 1 {
			name += fmt.Sprintf("-%d", i+1)
		}
		tt := answerTable(e, q, c, t, name)
		if err := writeTable(w, filepath.Join("tables", name), q, tt, []*Cell{c}); err != nil {
			return err
		}
	}
	return nil
}

func writeTable(w *writer, stem, q string, t Table, cells []*Cell) error {
	if err := w.write(stem+".tex", "table", q, []byte(t.LaTeX()), cells, nil); err != nil {
		return err
	}
	return w.write(stem+".md", "table", q, []byte(t.Markdown()), cells, nil)
}

// summaryTable is one row per cell: its repetitions, its primary metric
// and the run-level metrics, each the mean ± CI over valid repetitions.
func summaryTable(e *Experiment, q string, cells []*Cell) Table {
	t := Table{Label: strings.ToLower(q) + "-summary", Columns: []string{"configuration", "n"}, Numeric: []bool{false, true}}
	aggs := make([]aggregate.Aggregate, len(cells))
	primary := ""
	for i, c := range cells {
		aggs[i] = aggregateOf(c, e.Confidence)
		if primary == "" {
			primary = aggs[i].Primary
		}
	}
	names := append([]string{primary}, summaryMetrics...)
	if primary == "" {
		names = summaryMetrics
	}
	for _, n := range names {
		t.Columns, t.Numeric = append(t.Columns, n), append(t.Numeric, true)
	}
	for i, c := range cells {
		a := aggs[i]
		row := []string{c.Label, fmt.Sprintf("%d/%d", a.Valid, a.Repetitions)}
		for _, n := range names {
			est, ok := a.Metric(n)
			row = append(row, estimateCell(est, ok))
		}
		t.Rows = append(t.Rows, row)
	}
	t.Caption = fmt.Sprintf("%s %s (%s). Each value is the mean over the valid repetitions (n: valid of all) ± half its %g %% Student t interval; one repetition gives the value alone. Primary metric: %s.",
		q, cells[0].Name, e.Name, 100*e.Confidence, orDash(primary))
	return t
}

// answerTable is a cell's first result table, pooled over its
// repetitions.
func answerTable(e *Experiment, q string, c *Cell, rt result.Table, label string) Table {
	t := Table{Label: label, Columns: rt.Columns}
	for i := range rt.Columns {
		t.Numeric = append(t.Numeric, i > 0 && numericColumn(rt, i))
	}
	for _, row := range rt.Rows {
		var cells []string
		for _, cl := range row {
			if cl.Metric == nil {
				cells = append(cells, cl.Text)
				continue
			}
			cells = append(cells, metricCell(*cl.Metric))
		}
		t.Rows = append(t.Rows, cells)
	}
	// The Q's note describes one run's intervals (a Wilson interval, a
	// bracket); pooled over repetitions they are Student t intervals,
	// so the note is kept only for a single repetition.
	valid := 0
	for _, f := range c.Runs() {
		if f.Run != nil && f.Run.Valid {
			valid++
		}
	}
	if valid == 0 {
		t.Caption = fmt.Sprintf("%s %s, %s: %s. No valid repetition: nothing is pooled (– where no valid run measured a value).", q, c.Name, c.Label, rt.Title)
		return t
	}
	if valid == 1 { // one run's own figures: its note says what its intervals are
		t.Caption = fmt.Sprintf("%s %s, %s: %s, from one valid repetition (its own intervals). %s", q, c.Name, c.Label, rt.Title, rt.Note)
		return t
	}
	t.Caption = fmt.Sprintf("%s %s, %s: %s, pooled over its %d valid repetitions (mean ± half the %g %% Student t interval).",
		q, c.Name, c.Label, rt.Title, valid, 100*e.Confidence)
	return t
}

// metricCell is a pooled metric: mean ± half-interval, or its state (a
// value measured on a grid keeps its resolution), in fixed point.
func metricCell(m result.Metric) string {
	if m.Resolution != nil {
		return result.Short(m)
	}
	if m.State == result.Measured && m.Interval != nil {
		return fixedCI(m.Value, m.Interval[0], m.Interval[1], m.Unit)
	}
	return result.Mean(m)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// slug is a file-name part of a title ("Burst and base windows" →
// "burst-and-base-windows").
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// Markdown writes t as a GitHub table with its caption above.
func (t Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- generated by sagebench paper; do not edit -->\n\n%s\n\n|", mdEscape(t.Caption))
	for _, c := range t.Columns {
		b.WriteString(" " + mdEscape(c) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Columns {
		if t.Numeric[i] {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		b.WriteString("|")
		for _, c := range row {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

func texRow(cells []string) string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = texEscape(c)
	}
	return strings.Join(out, " & ") + ` \\`
}

var texReplacer = strings.NewReplacer(
	`\`, `\textbackslash{}`, `{`, `\{`, `}`, `\}`, `$`, `\$`, `&`, `\&`, `#`, `\#`, `^`, `\^{}`, `_`, `\_`, `%`, `\%`, `~`, `\~{}`,
	"±", `$\pm$`, "–", `--`, "—", `---`, "×", `$\times$`, "≥", `$\geq$`, "≤", `$\leq$`, "∞", `$\infty$`, "−", `$-$`, "÷", `$\div$`, "→", `$\to$`,
	"₀", `$_0$`, "₁", `$_1$`, "₂", `$_2$`, "₃", `$_3$`, "₄", `$_4$`, "ₙ", `$_n$`, "²", `$^2$`, "≈", `$\approx$`, "≠", `$\neq$`,
	"µ", `$\mu$`, "μ", `$\mu$`, "·", `$\cdot$`, "…", `\ldots{}`, "′", `$'$`, "‰", `\textperthousand{}`, "\u00a0", `~`, "\u202f", `\,`,
	"\n", " ")

// texEscape makes s safe in LaTeX text.
func texEscape(s string) string { return texReplacer.Replace(s) }

// numericColumn reports whether column i of t holds numbers: a metric
// cell, or text that reads as a number ("12.3", "–" aside).
func numericColumn(t result.Table, i int) bool {
	for _, row := range t.Rows {
		if i >= len(row) {
			continue
		}
		if row[i].Metric != nil {
			return true
		}
		if s := strings.ReplaceAll(row[i].Text, ",", ""); s != "" && s != "–" {
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				return false
			}
		}
	}
	return true
}
