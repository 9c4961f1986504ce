package presenter

import (
	"fmt"
	"io"
	"math"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/result"
)

// AggregateAnswer is the sentence an aggregate leads with: the primary
// metric's mean, its interval and what was left out.
func AggregateAnswer(a aggregate.Aggregate) string {
	s := fmt.Sprintf("%s %s over %d repetitions (%d valid): ", a.Workload, a.Name, a.Repetitions, a.Valid)
	e, ok := a.Metric(a.Primary)
	if !ok {
		return s + "no primary metric was recorded"
	}
	m := e.Metric()
	switch m.State {
	case result.Measured:
		s += fmt.Sprintf("%s mean %s over %d measured", m.Name, result.Format(m), e.N)
		if x := e.Excluded.String(); x != "" {
			s += "; " + x
		}
		if e.Interval == nil {
			s += "; no interval from one value"
		}
	default:
		s += m.Name + " " + result.Format(m)
	}
	if len(a.Duplicates) > 0 {
		s += fmt.Sprintf("; %d duplicate runs (same seed) left out", len(a.Duplicates))
	}
	return s
}

// Aggregate renders the aggregate: its answer, then a row per metric with
// the mean, median, deviation, interval and exclusions.
func Aggregate(w io.Writer, a aggregate.Aggregate, markdown bool) {
	if markdown {
		fmt.Fprintf(w, "**Answer:** %s\n\n", AggregateAnswer(a))
	} else {
		fmt.Fprintf(w, "answer: %s\n", AggregateAnswer(a))
	}
	ci := fmt.Sprintf("%g %% CI of the mean", 100*a.Confidence)
	t := result.Table{Columns: []string{"metric", "n", "mean", "median", "stddev", ci, "method", "excluded"}}
	for _, e := range a.Metrics {
		row := []result.Cell{result.Text(e.Name), result.Textf("%d", e.N)}
		if e.State != result.Measured {
			row = append(row, result.Text(string(e.State)+": "+e.Reason), result.Text("–"), result.Text("–"), result.Text("–"), result.Text(""))
		} else {
			row = append(row, result.Text(val(e.Mean, e.Unit)), result.Text(val(e.Median, e.Unit)), result.Text(val(e.Stddev, e.Unit)),
				result.Text(interval(e)), result.Text(e.Method))
		}
		t.AddRow(append(row, result.Text(e.Excluded.String()))...)
	}
	WriteTable(w, t, markdown)
}

func val(v *float64, unit string) string {
	if v == nil {
		return "–"
	}
	return result.FormatValue(*v, unit)
}

func interval(e aggregate.Estimate) string {
	if e.Interval == nil || math.IsNaN(e.Interval[0]) {
		return "– (one value)"
	}
	return "[" + result.FormatValue(e.Interval[0], e.Unit) + ", " + result.FormatValue(e.Interval[1], e.Unit) + "]"
}
