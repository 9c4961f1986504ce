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

// TestGroupsCountFailuresBeside: every group carries its E2E and (a
// streaming type's) TTFT quantiles counting a failed request +∞ beside
// the successes' figures: with 2 of 100 failed the p99 is a bound open
// above while the successes' own p99 is a number; an embedding group has
// no TTFT to count.
func TestGroupsCountFailuresBeside(t *testing.T) {
	c := NewCollector()
	for i := range 98 {
		r := req("p", "llm", i, 10*time.Millisecond, float64(i+1), 0.1, true)
		r.FirstToken, r.TTFTMs = 1, float64(i+1)/2
		c.Add(r)
	}
	for range 2 {
		c.Add(record.Request{Kind: "request", Type: "llm", Phase: "p", IntendedNS: 1, SentNS: 2, OK: false, ErrorClass: "timeout"})
	}
	c.Add(req("p", "embedding", 200, 10*time.Millisecond, 0, 0, true))
	s, _ := c.Summarize([]Phase{{Name: "p", End: time.Second, Scheduled: 101, ScheduleSpan: time.Second}}, Validity{})
	var llm, emb *record.Group
	for i, g := range s.Groups {
		if len(g.Labels) == 1 && g.Labels[LabelType] == "llm" {
			llm = &s.Groups[i]
		}
		if len(g.Labels) == 1 && g.Labels[LabelType] == "embedding" {
			emb = &s.Groups[i]
		}
	}
	if llm == nil || emb == nil {
		t.Fatalf("groups %+v", s.Groups)
	}
	if len(llm.E2ECountingFailures) != 3 || len(llm.TTFTCountingFailures) != 2 {
		t.Fatalf("llm group: %d E2E and %d TTFT quantiles; want 3 and 2", len(llm.E2ECountingFailures), len(llm.TTFTCountingFailures))
	}
	for _, m := range []result.Metric{llm.E2ECountingFailures[2], llm.TTFTCountingFailures[1]} {
		if m.State != result.Bound || !math.IsInf(m.Interval[1], 1) {
			t.Errorf("%s %s; want a bound open above (2 of 100 failed)", m.Name, result.Format(m))
		}
	}
	if llm.E2E.P99 <= 0 || llm.E2E.P99 > 99 {
		t.Errorf("the successes' own p99 %v", llm.E2E.P99)
	}
	if len(emb.E2ECountingFailures) != 3 || emb.TTFTCountingFailures != nil || !emb.E2ECountingFailures[2].Measured() {
		t.Errorf("embedding group: %+v, TTFT %+v", emb.E2ECountingFailures, emb.TTFTCountingFailures)
	}
}

// TestMixedGroupTTFTCountsStreamsOnly: a group of mixed types (a phase)
// counts +∞ in its TTFT only the failures of a type that streams; a
// failed embedding has no first token to wait for. A group written
// before stream_errors counts every failure (a bound, never too low).
func TestMixedGroupTTFTCountsStreamsOnly(t *testing.T) {
	c := NewCollector()
	for i := range 10 {
		r := req("p", "llm", i, 10*time.Millisecond, float64(i+1), 0.1, true)
		r.FirstToken, r.TTFTMs = 1, float64(i+1)
		c.Add(r)
	}
	c.Add(record.Request{Kind: "request", Type: "embedding", Phase: "p", IntendedNS: 1, SentNS: 2, OK: false, ErrorClass: "timeout"})
	s, _ := c.Summarize([]Phase{{Name: "p", End: time.Second, Scheduled: 11, ScheduleSpan: time.Second}}, Validity{})
	var phase *record.Group
	for i, g := range s.Groups {
		if len(g.Labels) == 1 && g.Labels[LabelPhase] == "p" {
			phase = &s.Groups[i]
		}
	}
	if phase == nil || phase.StreamErrors == nil || *phase.StreamErrors != 0 || phase.Errors != 1 {
		t.Fatalf("phase group %+v", phase)
	}
	if m := phase.TTFTCountingFailures[1]; !m.Measured() || m.Value != 10 {
		t.Errorf("phase TTFT p99 %s; want 10 measured (the failed embedding has no TTFT)", result.Format(m))
	}
	old := *phase
	old.StreamErrors = nil
	if m := GroupTTFT(DefTTFTP99, 0.99, old); m.State != result.Bound {
		t.Errorf("a group written before stream_errors: TTFT p99 %s; want a bound", result.Format(m))
	}
}
