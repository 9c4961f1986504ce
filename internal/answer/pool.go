package answer

import (
	"fmt"
	"strings"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/result"
)

// Rep is one repetition of a configuration: its result (nil when the run
// has none) and its validity.
type Rep struct {
	Result *result.Result
	Valid  bool
}

// Pool is the result of the repetitions of one configuration: each
// metric, each metric cell of a table (rows matched by their text
// cells) and each event's metrics estimated with aggregate.Of — the mean
// over the valid repetitions that measured it with its Student t
// interval at conf, or the state no valid repetition escaped; with one
// valid repetition, its own metric (with its own interval). Tables
// without metric cells (a per-run listing) are left out. Nil when no
// repetition has a result.
func Pool(reps []Rep, conf float64) *result.Result {
	var first *result.Result
	valid := 0
	for _, r := range reps {
		if r.Result != nil && first == nil {
			first = r.Result
		}
		if r.Result != nil && r.Valid {
			valid++
		}
	}
	if first == nil {
		return nil
	}
	est := func(pick func(*result.Result) (result.Metric, bool)) result.Metric {
		var samples []aggregate.Sample
		for _, r := range reps {
			if r.Result == nil {
				continue
			}
			if m, ok := pick(r.Result); ok {
				samples = append(samples, aggregate.Sample{Metric: m, Valid: r.Valid})
			}
		}
		if one, ok := onlyValid(samples); ok {
			return one // one valid repetition: its own value and interval (a Wilson interval, a bracket)
		}
		m := aggregate.Of(samples, conf).Metric()
		if m.Name == "" {
			m, _ = pick(first)
		}
		return m
	}
	out := &result.Result{}
	for _, m := range first.Metrics {
		name := m.Name
		out.Metrics = append(out.Metrics, est(func(r *result.Result) (result.Metric, bool) { return r.Metric(name) }))
	}
	out.Primary = est(func(r *result.Result) (result.Metric, bool) { return r.Metric(first.Primary.Name) })
	out.Answer = fmt.Sprintf("over %d valid of %d repetitions: %s %s", valid, len(reps), out.Primary.Name, result.Format(out.Primary))
	for _, t := range first.Tables {
		if pt, ok := poolTable(t, reps, est); ok {
			out.Tables = append(out.Tables, pt)
		}
	}
	out.Events = poolEvents(first.Events, est)
	return out
}

// onlyValid is the metric of the one valid sample, when exactly one is.
func onlyValid(samples []aggregate.Sample) (result.Metric, bool) {
	var one result.Metric
	n := 0
	for _, s := range samples {
		if s.Valid {
			one, n = s.Metric, n+1
		}
	}
	return one, n == 1
}

// poolTable estimates each metric cell of t over the repetitions' rows
// with the same text cells.
func poolTable(t result.Table, reps []Rep, est func(func(*result.Result) (result.Metric, bool)) result.Metric) (result.Table, bool) {
	out := result.Table{Key: t.Key, Title: t.Title, Note: t.Note, Columns: t.Columns}
	metrics := false
	for _, row := range t.Rows {
		key := rowKey(row)
		cells := make([]result.Cell, len(row))
		for i, c := range row {
			if c.Metric == nil {
				cells[i] = c
				continue
			}
			metrics = true
			col := i
			m := est(func(r *result.Result) (result.Metric, bool) { return cellOf(r, t, key, col) })
			cells[i] = result.Of(m)
		}
		out.Rows = append(out.Rows, cells)
	}
	return out, metrics
}

// rowKey identifies a row by its text cells.
func rowKey(row []result.Cell) string {
	var parts []string
	for _, c := range row {
		if c.Metric == nil {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\x00")
}

// cellOf is the metric in column col of r's table like (same key, or
// for records without keys the same title), in the row whose text cells
// are key.
func cellOf(r *result.Result, like result.Table, key string, col int) (result.Metric, bool) {
	var t result.Table
	ok := false
	for _, x := range r.Tables {
		if x.Key == like.Key && (x.Key != "" || x.Title == like.Title) {
			t, ok = x, true
			break
		}
	}
	if !ok {
		return result.Metric{}, false
	}
	for _, row := range t.Rows {
		if rowKey(row) == key && col < len(row) && row[col].Metric != nil {
			return *row[col].Metric, true
		}
	}
	return result.Metric{}, false
}

// poolEvents estimates each event's metrics over the repetitions' events
// with the same sequence number and action.
func poolEvents(events []result.Event, est func(func(*result.Result) (result.Metric, bool)) result.Metric) []result.Event {
	var out []result.Event
	for _, e := range events {
		pe := e
		pe.Metrics = nil
		for _, m := range e.Metrics {
			seq, action, name := e.Seq, e.Action, m.Name
			pe.Metrics = append(pe.Metrics, est(func(r *result.Result) (result.Metric, bool) {
				for _, x := range r.Events {
					if x.Seq == seq && x.Action == action {
						for _, xm := range x.Metrics {
							if xm.Name == name {
								return xm, true
							}
						}
					}
				}
				return result.Metric{}, false
			}))
		}
		out = append(out, pe)
	}
	return out
}
