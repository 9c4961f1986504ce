package stats

import (
	"fmt"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
)

// builder groups results into cells the way benchstat's benchtab.Builder
// does: table by .config and .unit, rows and columns by projections.
type builder struct {
	filter                *benchproc.Filter
	tableBy, rowBy, colBy *benchproc.Projection
	residue               *benchproc.Projection
	unitField             *benchproc.Field
	tables                map[benchproc.Key]*cellTable
}

type cellKey struct{ row, col benchproc.Key }

type cellTable struct {
	rows, cols map[benchproc.Key]struct{}
	cells      map[cellKey]*rawCell
}

type rawCell struct {
	values  []float64
	residue map[benchproc.Key]struct{}
}

func newBuilder(o Options) (*builder, error) {
	filter, err := benchproc.NewFilter(o.Filter)
	if err != nil {
		return nil, fmt.Errorf("parsing filter %q: %w", o.Filter, err)
	}
	var p benchproc.ProjectionParser
	tableBy, unitField, err := p.ParseWithUnit(o.Table, filter)
	if err != nil {
		return nil, fmt.Errorf("parsing table projection %q: %w", o.Table, err)
	}
	b := &builder{filter: filter, tableBy: tableBy, unitField: unitField, tables: map[benchproc.Key]*cellTable{}}
	if b.rowBy, err = p.Parse(o.Row, filter); err != nil {
		return nil, fmt.Errorf("parsing row projection %q: %w", o.Row, err)
	}
	if b.colBy, err = p.Parse(o.Col, filter); err != nil {
		return nil, fmt.Errorf("parsing column projection %q: %w", o.Col, err)
	}
	if _, err = p.Parse(o.Ignore, filter); err != nil {
		return nil, fmt.Errorf("parsing ignore %q: %w", o.Ignore, err)
	}
	b.residue = p.Residue()
	return b, nil
}

func (b *builder) add(r *benchfmt.Result) error {
	ok, err := b.filter.Apply(r)
	if err != nil {
		return fmt.Errorf("filtering %s: %w", r.Name.Full(), err)
	}
	if !ok {
		return nil
	}
	tableKeys := b.tableBy.ProjectValues(r)
	ck := cellKey{b.rowBy.Project(r), b.colBy.Project(r)}
	residue := b.residue.Project(r)
	for i, tk := range tableKeys {
		t := b.tables[tk]
		if t == nil {
			t = &cellTable{rows: map[benchproc.Key]struct{}{}, cols: map[benchproc.Key]struct{}{}, cells: map[cellKey]*rawCell{}}
			b.tables[tk] = t
		}
		c := t.cells[ck]
		if c == nil {
			c = &rawCell{residue: map[benchproc.Key]struct{}{}}
			t.cells[ck] = c
			t.rows[ck.row] = struct{}{}
			t.cols[ck.col] = struct{}{}
		}
		c.values = append(c.values, r.Values[i].Value)
		c.residue[residue] = struct{}{}
	}
	return nil
}

func (b *builder) sortedTables() []benchproc.Key {
	keys := make([]benchproc.Key, 0, len(b.tables))
	for k := range b.tables {
		keys = append(keys, k)
	}
	benchproc.SortKeys(keys)
	return keys
}

func sortedKeys(m map[benchproc.Key]struct{}) []benchproc.Key {
	keys := make([]benchproc.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	benchproc.SortKeys(keys)
	return keys
}

// table summarises one table: cells, comparisons against column 0, and
// the geomean row, as benchtab.ToTables and summarizeCol do.
func (b *builder) table(k benchproc.Key, units benchfmt.UnitMetadataMap, thr *benchmath.Thresholds, conf float64) *Table {
	ct := b.tables[k]
	unit := k.Get(b.unitField)
	assume := units.GetAssumption(unit)
	rows, cols := sortedKeys(ct.rows), sortedKeys(ct.cols)
	t := &Table{Unit: unit, Assumption: assume.SummaryLabel(), Better: Direction(unit, units), Config: configOf(k)}
	for _, c := range cols {
		t.Columns = append(t.Columns, c.StringValues())
	}
	for _, r := range rows {
		row := &Row{Name: r.StringValues(), Cells: make([]*Cell, len(cols))}
		var base *Cell
		for j, c := range cols {
			raw, ok := ct.cells[cellKey{r, c}]
			if !ok {
				continue
			}
			cell := summarize(raw, assume, thr, conf)
			if j == 0 {
				base = cell
			} else if base != nil {
				compare(cell, base, assume)
			}
			row.Cells[j] = cell
		}
		t.Rows = append(t.Rows, row)
	}
	for j := range cols {
		t.Geomean = append(t.Geomean, summarizeCol(t, j))
	}
	return t
}

func configOf(k benchproc.Key) []KeyValue {
	var out []KeyValue
	for _, f := range k.Projection().FlattenedFields() {
		if f.Name == ".unit" {
			continue
		}
		out = append(out, KeyValue{Key: f.Name, Value: k.Get(f)})
	}
	return out
}

func summarize(raw *rawCell, assume benchmath.Assumption, thr *benchmath.Thresholds, conf float64) *Cell {
	vals := append([]float64(nil), raw.values...)
	s := benchmath.NewSample(vals, thr)
	sum := assume.Summary(s, conf)
	c := &Cell{Values: s.Values, Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Confidence: sum.Confidence,
		sample: s, summary: sum}
	if nsk := benchproc.NonSingularFields(sortedKeys(raw.residue)); len(nsk) > 0 {
		names := make([]string, len(nsk))
		for i, f := range nsk {
			names[i] = f.Name
		}
		c.Warnings = append(c.Warnings, "benchmarks vary in "+strings.Join(names, ", "))
	}
	c.Warnings = append(c.Warnings, errStrings(sum.Warnings)...)
	return c
}

func compare(c, base *Cell, assume benchmath.Assumption) {
	cmp := assume.Compare(base.sample, c.sample)
	c.comparison = cmp
	c.HasBase, c.P, c.N1, c.N2 = true, cmp.P, cmp.N1, cmp.N2
	c.Delta = cmp.FormatDelta(base.Center, c.Center)
	c.same = assume == benchmath.AssumeExact && base.Center == c.Center
	if base.Center != 0 {
		c.Ratio = c.Center / base.Center
	}
	c.Warnings = append(c.Warnings, errStrings(cmp.Warnings)...)
}

// summarizeCol is benchtab's summarizeCol over our cells.
func summarizeCol(t *Table, j int) *Geomean {
	g := &Geomean{}
	nBase := 0
	for _, r := range t.Rows {
		if r.Cells[0] != nil {
			nBase++
		}
	}
	var centers, ratios []float64
	badRatio := false
	for _, r := range t.Rows {
		c := r.Cells[j]
		if c == nil {
			continue
		}
		centers = append(centers, c.Center)
		if j == 0 || r.Cells[0] == nil {
			continue
		}
		a, b := c.Center, r.Cells[0].Center
		switch {
		case a == b:
			ratios = append(ratios, 1)
		case b == 0:
			badRatio = true
			ratios = append(ratios, 0)
		default:
			ratios = append(ratios, a/b)
		}
	}
	if j > 0 && nBase != len(ratios) {
		g.Warnings = append(g.Warnings, "benchmark set differs from baseline; geomeans may not be comparable")
	}
	if gm := stats.GeoMean(centers); gm != gm {
		g.Warnings = append(g.Warnings, "summaries must be >0 to compute geomean")
	} else {
		g.HasSummary, g.Summary = true, gm
	}
	if j > 0 && !badRatio {
		if gm := stats.GeoMean(ratios); gm != gm {
			g.Warnings = append(g.Warnings, "ratios must be >0 to compute geomean")
		} else {
			g.HasRatio, g.Ratio = true, gm
		}
	}
	return g
}
