package drill

import (
	"math"
	"slices"

	"github.com/sagebench/sagebench/internal/series"
)

// MeanThroughput is the mean throughput (ok/s) of the windows lying wholly
// in [fromNS, toNS), NaN when none does.
func MeanThroughput(ws []series.Window, fromNS, toNS int64) float64 {
	sum, n := 0.0, 0
	for _, w := range ws {
		if w.StartNS >= fromNS && w.EndNS <= toNS {
			sum += w.Throughput
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// Attribution is a failed request charged to the nearest event.
type Attribution struct {
	ID    string `json:"id"`
	Class string `json:"error_class"`
	Event int    `json:"event_seq"` // -1: no event was performed
}

// Attribute charges every failed request to the performed event nearest
// (by actual time) to the request's intended send.
func (r *Run) Attribute() []Attribution {
	var out []Attribution
	for _, q := range r.Records {
		if q.OK {
			continue
		}
		best, dist := -1, int64(math.MaxInt64)
		for _, e := range r.Events {
			if e.Outcome != OutcomeOK {
				continue
			}
			if d := abs(q.IntendedNS - e.ActualNS); d < dist {
				best, dist = e.Seq, d
			}
		}
		out = append(out, Attribution{ID: q.ID, Class: q.ErrorClass, Event: best})
	}
	slices.SortFunc(out, func(a, b Attribution) int { return a.Event - b.Event })
	return out
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
