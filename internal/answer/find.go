package answer

import (
	"strings"

	"github.com/sagebench/sagebench/internal/result"
)

// table returns r's table whose title is one of titles (case-insensitive).
func table(r *result.Result, titles ...string) (result.Table, bool) {
	if r == nil {
		return result.Table{}, false
	}
	for _, t := range r.Tables {
		for _, want := range titles {
			if strings.EqualFold(t.Title, want) {
				return t, true
			}
		}
	}
	return result.Table{}, false
}

// column finds the column of t holding a metric: the first whose header
// contains one of headers (case-insensitive), else the first whose
// cells hold a metric named one of names; -1 when none.
func column(t result.Table, headers []string, names ...string) int {
	for i, c := range t.Columns {
		for _, h := range headers {
			if strings.Contains(strings.ToLower(c), strings.ToLower(h)) {
				return i
			}
		}
	}
	for _, row := range t.Rows {
		for i, c := range row {
			if c.Metric == nil {
				continue
			}
			for _, n := range names {
				if c.Metric.Name == n || strings.HasSuffix(c.Metric.Name, "."+n) {
					return i
				}
			}
		}
	}
	return -1
}

// textColumn finds the column whose header is one of headers exactly
// (case-insensitive); -1 when none.
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

// metric returns r's metric called name, else the first whose name ends
// in "."+name (a per-policy metric), else a zero Metric.
func metric(r *result.Result, name string) result.Metric {
	if r == nil {
		return result.Metric{}
	}
	if m, ok := r.Lookup(name); ok {
		return m
	}
	return result.Metric{}
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
