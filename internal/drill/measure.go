package drill

import (
	"math"
	"slices"
	"time"
)

// Attribution is a failed request and the event it is charged to.
type Attribution struct {
	ID    string `json:"id"`
	Class string `json:"error_class"`
	Event int    `json:"event_seq"` // -1: outside every event's window (background)
}

// Failures sorts the run's failed requests by event: a failure whose
// intended send lies in a performed event's window — from pre before the
// event started to post after it returned — is charged to the event
// whose window's centre is nearest; the others are background failures.
// noRecord counts the requests sent that left no record at all (their
// time is not known).
func (r *Run) Failures(pre, post time.Duration) (charged, background []Attribution, noRecord int) {
	for _, q := range r.Records {
		if q.OK {
			continue
		}
		best, dist := -1, int64(math.MaxInt64)
		for _, e := range r.Events {
			if e.Outcome != OutcomeOK {
				continue
			}
			from, to := e.ActualNS-int64(pre), max(e.DoneNS, e.ActualNS)+int64(post)
			if q.IntendedNS < from || q.IntendedNS > to {
				continue
			}
			if d := abs(q.IntendedNS - (from+to)/2); d < dist {
				best, dist = e.Seq, d
			}
		}
		a := Attribution{ID: q.ID, Class: q.ErrorClass, Event: best}
		if best < 0 {
			background = append(background, a)
		} else {
			charged = append(charged, a)
		}
	}
	slices.SortStableFunc(charged, func(a, b Attribution) int { return a.Event - b.Event })
	return charged, background, max(r.Sent-len(r.Records), 0)
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
