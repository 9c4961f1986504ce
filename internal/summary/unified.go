package summary

import (
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// Metadata keys of a unified row's latency columns (latency_p50,
// latency_p95, latency_p99: the E2E quantiles in ms, a failed request
// counting +∞).
const (
	// MetaLatencyStates maps each latency column to its state
	// (result.State): a column holds a number only when measured; it is
	// null when bound (failures moved or reached the quantile's rank),
	// never (every request failed) or not measurable.
	MetaLatencyStates = "latency_states"
	// MetaLatencyReasons maps a column that is not measured to why.
	MetaLatencyReasons = "latency_reasons"
	// MetaLatencyOK holds the successes' own E2E quantiles when some
	// requests failed, labelled so: never under the plain names.
	MetaLatencyOK = "latency_successes_only"
)

// LatencyColumns are the unified latency columns, each with the metric
// it is read from.
var LatencyColumns = []struct {
	Column string
	Def    result.Def
}{{"latency_p50", DefE2EP50}, {"latency_p95", DefE2EP95}, {"latency_p99", DefE2EP99}}

// LatencyCells are the unified latency columns read off ms (metrics
// named as DefE2EP50, DefE2EP95, DefE2EP99, counting failures +∞): each
// the value when measured, else nil; meta holds every column's state
// and the reason of each that is not measured (a column whose metric is
// missing from ms is not measurable for the row). A cell never holds the
// successes' figure when failures moved the quantile.
func LatencyCells(ms []result.Metric) (cells [3]*float64, meta map[string]any) {
	states, reasons := map[string]string{}, map[string]string{}
	for i, c := range LatencyColumns {
		m := c.Def.NotMeasurable("the row has no " + c.Def.Name)
		for _, x := range ms {
			if x.Name == c.Def.Name {
				m = x
			}
		}
		states[c.Column] = string(m.State)
		if m.State == result.Measured {
			cells[i] = record.F(m.Value)
		} else if m.Reason != "" {
			reasons[c.Column] = m.Reason
		}
	}
	meta = map[string]any{MetaLatencyStates: states}
	if len(reasons) > 0 {
		meta[MetaLatencyReasons] = reasons
	}
	return cells, meta
}
