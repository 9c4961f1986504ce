package summary

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// TestE2EQuantileCountsFailuresInfinite: the run-level E2E quantiles
// count a failed request as +∞ — measured when the failures leave the
// rank among the successes where it was, bracketed from the successes'
// own figure to the next one their summary holds when they move it, +∞ (a bound open above)
// when failures reach the rank, never when every request failed; the
// successes' figure is never given as the quantile itself.
func TestE2EQuantileCountsFailuresInfinite(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name           string
		requests, done int
		state          result.State
		lo, hi         float64
	}{
		{"no failure", 100, 100, result.Measured, 0, 0},
		{"one failure, the same rank among the successes", 200, 199, result.Measured, 0, 0},
		{"failures below the rank, bracketed by the next figure", 1000, 995, result.Bound, 40, 70},
		{"failures at the p99's rank", 100, 98, result.Bound, 40, inf},
		{"every request failed", 10, 0, result.Never, 0, 0},
		{"nothing sent", 0, 0, result.NotMeasurable, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := record.Summary{Requests: c.requests, E2E: record.Latency{Count: int64(c.done), P99: 40, P999: 70, Max: 90}}
			var m result.Metric
			for _, x := range Metrics(s) {
				if x.Name == DefE2EP99.Name {
					m = x
				}
			}
			if err := m.Check(); err != nil {
				t.Fatalf("%+v breaks the model: %v", m, err)
			}
			if m.State != c.state {
				t.Fatalf("state %s (%s); want %s", m.State, result.Format(m), c.state)
			}
			if c.state == result.Measured && m.Value != 40 {
				t.Errorf("value %v; want the successes' 40 ms (no failure)", m.Value)
			}
			if c.state == result.Bound && (m.Interval == nil || m.Interval[0] != c.lo || m.Interval[1] != c.hi) {
				t.Errorf("interval %v; want [%v, %v]", m.Interval, c.lo, c.hi)
			}
		})
	}
}

// TestSummaryCountsFailuresBeside: run.json's summary carries the E2E
// quantiles counting failures +∞ beside the successes' e2e — here the
// p99 falls on the 2 failures of 100 (a bound open above), the p50 not
// — and they survive JSON.
func TestSummaryCountsFailuresBeside(t *testing.T) {
	c := NewCollector()
	for i := range 98 {
		c.Add(req("p", "llm", i, 10*time.Millisecond, float64(i+1), 0.1, true))
	}
	for range 2 {
		c.Add(record.Request{Kind: "request", Type: "llm", Phase: "p", IntendedNS: 1, SentNS: 2, OK: false, ErrorClass: "timeout"})
	}
	s, _ := c.Summarize([]Phase{{Name: "p", End: time.Second, Scheduled: 100, ScheduleSpan: time.Second}}, Validity{})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back record.Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got := map[string]result.Metric{}
	for _, m := range back.E2ECountingFailures {
		got[m.Name] = m
	}
	p99, p50 := got[DefE2EP99.Name], got[DefE2EP50.Name]
	if p99.State != result.Bound || !math.IsInf(p99.Interval[1], 1) || back.E2E.P99 > 99 {
		t.Errorf("p99 %s (successes' %v); want a bound open above", result.Format(p99), back.E2E.P99)
	}
	if p50.State != result.Bound && p50.State != result.Measured || len(back.E2ECountingFailures) != 3 {
		t.Errorf("p50 %s, %d quantiles; want a figure and 3", result.Format(p50), len(back.E2ECountingFailures))
	}
}
