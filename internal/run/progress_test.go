package run

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/summary"
)

// TestProgressNamesThePhaseAndTheCurrentRate: a line names the phase as
// the workload labels it and shows the completions per second over the
// last window — after a fast window then a stalled one, 0, not the
// cumulative mean.
func TestProgressNamesThePhaseAndTheCurrentRate(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	w := window{at: t0}
	if r := w.rate(t0.Add(5*time.Second), 100); r != 20 {
		t.Errorf("first window: %v req/s, want 20", r)
	}
	if r := w.rate(t0.Add(10*time.Second), 100); r != 0 {
		t.Errorf("stalled window: %v req/s, want 0 (the cumulative mean would be 10)", r)
	}
	for _, tc := range []struct {
		name, label, phase, want string
	}{
		{"labelled", "policy", "fifo", "  policy fifo  sent"},
		{"unlabelled", "", "capacity", "  phase capacity  sent"},
		{"no phase", "policy", "", "s  sent"},
	} {
		line := progressLine(10*time.Second, 120, summary.Live{Done: 100, Phase: tc.phase}, 0, tc.label)
		if !strings.Contains(line, tc.want) || !strings.Contains(line, "now 0.0 req/s") {
			t.Errorf("%s: %q, want %q and the window's rate", tc.name, line, tc.want)
		}
	}
}

// TestProgressP99CountsFailures: the progress line's p99 counts a failed
// request as +∞ (summary.Live): all failed reads +∞, never the successes'
// figure or 0; before any request ended it reads "–".
func TestProgressP99CountsFailures(t *testing.T) {
	at := func(ok, failed int) string {
		col := summary.NewCollector()
		for i := range ok + failed {
			col.Add(record.Request{ID: fmt.Sprint(i), Kind: "request", OK: i < ok, E2EMs: 100})
		}
		return progressLine(time.Second, int64(ok+failed), col.Live(), 0, "")
	}
	for _, tc := range []struct {
		name       string
		ok, failed int
		want       string
	}{
		{"none ended", 0, 0, "p99 E2E –"},
		{"all ok", 50, 0, "p99 E2E 100 ms"},
		{"a failure below the rank", 199, 1, "p99 E2E 100 ms"},
		{"failures at the rank", 98, 2, "p99 E2E +∞"},
		{"all failed", 0, 20, "p99 E2E +∞"},
	} {
		if line := at(tc.ok, tc.failed); !strings.Contains(line, tc.want) {
			t.Errorf("%s: %q; want %q", tc.name, line, tc.want)
		}
	}
}
