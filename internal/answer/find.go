package answer

import (
	"fmt"
	"strings"

	"gonum.org/v1/plot"

	"github.com/sagebench/sagebench/internal/chart"
	"github.com/sagebench/sagebench/internal/result"
)

// table returns r's table keyed key (result.Table.Key). A record written
// before tables had keys (legacy) falls back to its first table that
// fits; a record whose tables have keys never falls back, so a key
// renamed on one side blanks the figure with a reason instead of drawing
// another table.
func table(r *result.Result, key string, fits func(result.Table) bool) (result.Table, bool) {
	if r == nil {
		return result.Table{}, false
	}
	if t, ok := r.Table(key); ok {
		return t, true
	}
	if !legacy(r) {
		return result.Table{}, false
	}
	for _, t := range r.Tables {
		if fits(t) {
			return t, true
		}
	}
	return result.Table{}, false
}

// legacy reports whether r was recorded before tables had keys: it has
// tables, none keyed.
func legacy(r *result.Result) bool {
	for _, t := range r.Tables {
		if t.Key != "" {
			return false
		}
	}
	return len(r.Tables) > 0
}

// holds is a fits for table: the table has a cell of each metric named.
func holds(names ...string) func(result.Table) bool {
	return func(t result.Table) bool {
		for _, n := range names {
			if column(t, n) < 0 {
				return false
			}
		}
		return true
	}
}

// named reports whether a metric called got is the metric name: name
// itself, a per-policy "policy.name", or a qualified "x_name".
func named(got, name string) bool {
	return got == name || strings.HasSuffix(got, "."+name) || strings.HasSuffix(got, "_"+name)
}

// column finds the column of t holding the metric named name (exactly,
// else qualified: see named): the first row's cell that has it; -1 when
// none. Headers are for people and never read.
func column(t result.Table, name string) int {
	for _, exact := range []bool{true, false} {
		for _, row := range t.Rows {
			for i, c := range row {
				if c.Metric != nil && (c.Metric.Name == name || !exact && named(c.Metric.Name, name)) {
					return i
				}
			}
		}
	}
	return -1
}

// rowMetric is the metric of row called name (a zero Metric when none).
func rowMetric(row []result.Cell, name string) result.Metric {
	for _, c := range row {
		if c.Metric != nil && c.Metric.Name == name {
			return *c.Metric
		}
	}
	return result.Metric{}
}

// textColumn finds the column whose header is one of headers exactly
// (case-insensitive): for text columns, which have no metric name; -1
// when none.
func textColumn(t result.Table, headers ...string) int {
	for i, c := range t.Columns {
		for _, h := range headers {
			if strings.EqualFold(c, h) {
				return i
			}
		}
	}
	return -1
}

// cellText is the text of row's cell i ("" when out of range or a metric).
func cellText(row []result.Cell, i int) string {
	if i < 0 || i >= len(row) {
		return ""
	}
	return row[i].Text
}

// cellMetric is the metric of row's cell i (a zero Metric when none).
func cellMetric(row []result.Cell, i int) result.Metric {
	if i < 0 || i >= len(row) || row[i].Metric == nil {
		return result.Metric{}
	}
	return *row[i].Metric
}

// metric returns r's metric called name (among its metrics, then its
// tables' cells), else a zero Metric.
func metric(r *result.Result, name string) result.Metric {
	if r == nil {
		return result.Metric{}
	}
	if m, ok := r.Lookup(name); ok {
		return m
	}
	return result.Metric{}
}

// bound is r's metric called name when it is measured: a bound the
// figure draws (an SLO, the recovery rule's bound).
func bound(r *result.Result, name string) (float64, bool) {
	m := metric(r, name)
	return m.Value, m.State == result.Measured && m.Value > 0
}

// axis is a panel and the unit of its y axis: every metric drawn on it
// must have that unit (a fraction is drawn in percent on a "%" axis).
type axis struct {
	p    *plot.Plot
	unit string
}

// categoryAxis is a bar panel titled title whose y axis is in unit.
func categoryAxis(title, unit string) axis {
	return axis{p: chart.NewCategoryPanel(title, unit), unit: unit}
}

// bars draws series on a as chart.Bars does, after checking that each
// metric's unit is the axis's: a metric of another unit is an error (a
// figure bound to the wrong metric), never drawn.
func (a axis) bars(categories []string, series []chart.BarSeries) ([]chart.LegendEntry, error) {
	for j, s := range series {
		for i, m := range s.Metrics {
			if m.Name == "" {
				continue
			}
			switch {
			case m.Unit == result.Fraction && a.unit == "%":
				series[j].Metrics[i] = percent(m)
			case m.Unit != a.unit:
				return nil, fmt.Errorf("panel %q: metric %s in %q on an axis in %q", a.p.Title.Text, m.Name, m.Unit, a.unit)
			}
		}
	}
	return chart.Bars(a.p, categories, series), nil
}

// percent is a fraction metric in percent (value, interval), for an axis
// labelled in %; other units pass through.
func percent(m result.Metric) result.Metric {
	if m.Unit != result.Fraction {
		return m
	}
	m.Value *= 100
	if iv := m.Interval; iv != nil {
		m.Interval = &[2]float64{100 * iv[0], 100 * iv[1]}
	}
	return m
}
