package summary

import (
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
)

// TestRetrySummary: 20 requests of which 10 needed a second attempt give
// amplification 1.5; goodput without retries counts only first-attempt
// successes; a run that sent everything once reports no retry block.
func TestRetrySummary(t *testing.T) {
	phases := []Phase{{Start: 0, End: 10 * time.Second, ClosedLoop: true}}
	for _, tc := range []struct {
		name             string
		retried          int
		want             float64
		goodput, without float64
	}{
		{"half retried", 10, 1.5, 2, 1},
		{"none retried", 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector()
			for i := range 20 {
				r := record.Request{ID: "r", Kind: "request", Type: "llm", OK: true, SLOMet: true, SentNS: 1,
					ServiceMs: 10, Attempt: 1, Attempts: 1}
				if i < tc.retried {
					r.Attempt, r.Attempts = 2, 2
					r.Tries = []record.Try{{N: 1, ErrorClass: "dropped_after_send"}, {N: 2}}
				}
				c.Add(r)
			}
			s, _ := c.Summarize(phases, Validity{})
			if tc.want == 0 {
				if s.Retry != nil {
					t.Fatalf("retry %+v for a run sent once", s.Retry)
				}
				return
			}
			if s.Retry == nil || s.Retry.Amplification != tc.want || s.Retry.Attempts != 30 || s.Retry.Retried != tc.retried {
				t.Fatalf("retry %+v, want amplification %g", s.Retry, tc.want)
			}
			if s.Retry.Goodput != tc.goodput || s.Retry.GoodputWithoutRetries != tc.without {
				t.Errorf("goodput %g / %g without retries, want %g / %g", s.Retry.Goodput, s.Retry.GoodputWithoutRetries, tc.goodput, tc.without)
			}
		})
	}
}
