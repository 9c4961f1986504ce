package reqset

import (
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/record"
)

// Occupancy is how the gateway queue was filled during a window, rebuilt
// from the records: each request that reported a queue wait was queued
// from its send to its send plus that wait.
type Occupancy struct {
	Busy      float64 // fraction of the window with at least one request queued
	MeanDepth float64 // time-averaged number of requests queued
	MaxDepth  int
}

// Depth is the time-averaged queue depth of rs in each step-long window
// of [from, to): the gateway queue over time.
func Depth(rs []record.Request, from, to, step time.Duration) []float64 {
	if step <= 0 || to <= from {
		return nil
	}
	var out []float64
	for w := from; w < to; w += step {
		out = append(out, Busy(rs, w, min(w+step, to)).MeanDepth)
	}
	return out
}

// Busy computes the queue occupancy of rs over [from, to) (offsets from
// the run's start). Requests without a reported wait are left out.
func Busy(rs []record.Request, from, to time.Duration) Occupancy {
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	for i := range rs {
		r := &rs[i]
		if r.QueueMs == nil || *r.QueueMs <= 0 || r.SentNS == 0 {
			continue
		}
		in, out := max(r.SentNS, int64(from)), min(r.SentNS+int64(*r.QueueMs*float64(time.Millisecond)), int64(to))
		if in < out {
			edges = append(edges, edge{in, 1}, edge{out, -1})
		}
	}
	if to <= from || len(edges) == 0 {
		return Occupancy{}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return int(min(max(a.at-b.at, -1), 1))
		}
		return a.delta - b.delta // leave before enter at the same instant
	})
	var o Occupancy
	depth, last := 0, int64(from)
	var busy, area float64
	for _, e := range edges {
		if e.at > last {
			span := float64(e.at - last)
			if depth > 0 {
				busy += span
			}
			area += span * float64(depth)
			last = e.at
		}
		depth += e.delta
		o.MaxDepth = max(o.MaxDepth, depth)
	}
	w := float64(to - from)
	o.Busy, o.MeanDepth = busy/w, area/w
	return o
}
