package run

import (
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/summary"
)

// TestPhaseRecords: every phase goes into run.json on the run's clock
// with its offered rate, so a burst's membership or the span before a
// kill is read from the record.
func TestPhaseRecords(t *testing.T) {
	got := phaseRecords([]summary.Phase{
		{Name: "base", Start: 0, End: 10 * time.Second, Scheduled: 51, ScheduleSpan: 10 * time.Second},
		{Name: "burst.1", Start: 10 * time.Second, End: 12500 * time.Millisecond, Scheduled: 100, ScheduleSpan: 2 * time.Second, Interrupted: true},
		{Name: "closed", Start: 13 * time.Second, End: 14 * time.Second, Scheduled: 9, ClosedLoop: true},
	})
	if len(got) != 3 {
		t.Fatalf("%d phases", len(got))
	}
	if b := got[1]; b.Name != "burst.1" || b.StartMs != 10000 || b.EndMs != 12500 || b.OfferedRate != 50 || !b.Interrupted {
		t.Errorf("burst %+v", b)
	}
	if got[0].OfferedRate != 5.1 || got[2].OfferedRate != 0 || !got[2].ClosedLoop {
		t.Errorf("base %+v, closed %+v", got[0], got[2])
	}
}
