package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
)

// TestRejectedTypeInvalid: a phase in which every request of a type was
// refused with a 4xx is no measurement — the run is invalid with that
// reason; a 429 (the target shedding) or a single success is not that.
func TestRejectedTypeInvalid(t *testing.T) {
	refused := func(phase, typ string, i, status int) record.Request {
		r := req(phase, typ, i, 10*time.Millisecond, 1, 0.1, false)
		r.OK, r.Status, r.ErrorClass = false, status, "http_4xx"
		return r
	}
	tests := []struct {
		name string
		add  func(c *Collector)
		want []string // substrings of the reasons, in order; none: valid
	}{
		{"every llm request 404 in phase fifo", func(c *Collector) {
			for i := range 10 {
				c.Add(refused("fifo", "llm", i, 404))
				c.Add(req("fifo", "embedding", i, 10*time.Millisecond, 1, 0.1, true))
			}
		}, []string{"phase fifo: all 10 llm requests were refused with a 4xx status"}},
		{"one phase of two", func(c *Collector) {
			for i := range 10 {
				c.Add(refused("fifo", "llm", i, 400))
				c.Add(req("priority", "llm", i, 10*time.Millisecond, 1, 0.1, true))
			}
		}, []string{"phase fifo: all 10 llm"}},
		{"unnamed phase", func(c *Collector) {
			for i := range 10 {
				c.Add(refused("", "embedding", i, 401))
			}
		}, []string{"all 10 embedding requests were refused"}},
		{"429 is the target shedding load, a measurement", func(c *Collector) {
			for i := range 10 {
				c.Add(refused("fifo", "llm", i, 429))
			}
		}, nil},
		{"one success among the 404s", func(c *Collector) {
			for i := range 9 {
				c.Add(refused("fifo", "llm", i, 404))
			}
			c.Add(req("fifo", "llm", 9, 10*time.Millisecond, 1, 0.1, true))
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector()
			tc.add(c)
			span := 90 * time.Millisecond
			phases := []Phase{{Name: "fifo", End: span, Scheduled: 10, ScheduleSpan: span}}
			if strings.HasPrefix(tc.name, "unnamed") {
				phases[0].Name = ""
			}
			_, reasons := c.Summarize(phases, Validity{MinDeliveredRatio: 0.01, MaxLagP99Ms: 1000})
			if len(reasons) != len(tc.want) {
				t.Fatalf("reasons %q, want %d matching %q", reasons, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(reasons[i], w) {
					t.Errorf("reason %q does not say %q", reasons[i], w)
				}
			}
		})
	}
}
