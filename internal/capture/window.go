package capture

import (
	"math"
	"time"
)

// point is one series' value at one successful scrape.
type point struct {
	at time.Time
	s  Series
}

// windowValue is one series over one window before rendering.
type windowValue struct {
	typ              string
	name             string
	labels           map[string]string
	start, end       float64
	delta            float64
	resets           int
	seconds          float64
	mean, max        float64
	buckets          []Bucket // bucket deltas (histograms)
	countDelta, sumD float64
}

// computeWindow derives every series' window value from the successful
// samples of one target in one window (in time order). A series seen in
// fewer than two samples has no value for the window.
func computeWindow(samples []Sample) map[string]windowValue {
	byKey := map[string][]point{}
	var order []string
	for _, smp := range samples {
		if smp.Err != nil {
			continue
		}
		for _, s := range smp.Series {
			k := s.Key()
			if _, ok := byKey[k]; !ok {
				order = append(order, k)
			}
			byKey[k] = append(byKey[k], point{at: smp.At, s: s})
		}
	}
	out := make(map[string]windowValue, len(order))
	for _, k := range order {
		pts := byKey[k]
		if len(pts) < 2 {
			continue
		}
		out[k] = seriesWindow(pts)
	}
	return out
}

func seriesWindow(pts []point) windowValue {
	first, last := pts[0], pts[len(pts)-1]
	w := windowValue{typ: last.s.Type, name: last.s.Name, labels: last.s.Labels,
		seconds: last.at.Sub(first.at).Seconds()}
	switch last.s.Type {
	case TypeGauge, TypeUntyped:
		w.start, w.end = first.s.Value, last.s.Value
		w.delta = w.end - w.start
		w.mean, w.max = gaugeMeanMax(pts)
	case TypeHistogram, TypeSummary:
		w.start, w.end = first.s.Count, last.s.Count
		w.countDelta, w.resets = counterDelta(pts, func(s Series) float64 { return s.Count })
		w.sumD, _ = counterDelta(pts, func(s Series) float64 { return s.Sum })
		w.delta = w.countDelta
		if last.s.Type == TypeHistogram {
			w.buckets = bucketDeltas(pts)
		}
	default:
		w.start, w.end = first.s.Value, last.s.Value
		w.delta, w.resets = counterDelta(pts, func(s Series) float64 { return s.Value })
	}
	return w
}

// counterDelta sums the increases between consecutive points; a decrease
// is a counter reset, after which the new value counts whole (as PromQL's
// increase does).
func counterDelta(pts []point, val func(Series) float64) (float64, int) {
	d, resets := 0.0, 0
	for i := 1; i < len(pts); i++ {
		prev, cur := val(pts[i-1].s), val(pts[i].s)
		if cur < prev {
			resets++
			d += cur
			continue
		}
		d += cur - prev
	}
	return d, resets
}

func gaugeMeanMax(pts []point) (float64, float64) {
	sum, max := 0.0, math.Inf(-1)
	for _, p := range pts {
		sum += p.s.Value
		max = math.Max(max, p.s.Value)
	}
	return sum / float64(len(pts)), max
}

// bucketDeltas is the per-bucket increase over the window with reset
// handling; a changed bucket layout counts as a reset of every bucket.
func bucketDeltas(pts []point) []Bucket {
	last := pts[len(pts)-1].s.Buckets
	out := make([]Bucket, len(last))
	for i, b := range last {
		out[i].UpperBound = b.UpperBound
	}
	for i := 1; i < len(pts); i++ {
		prev, cur := pts[i-1].s.Buckets, pts[i].s.Buckets
		same := sameBounds(prev, cur)
		for j := range out {
			if j >= len(cur) {
				break
			}
			if same && cur[j].Count >= prev[j].Count {
				out[j].Count += cur[j].Count - prev[j].Count
			} else {
				out[j].Count += cur[j].Count
			}
		}
	}
	return out
}

func sameBounds(a, b []Bucket) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].UpperBound != b[i].UpperBound {
			return false
		}
	}
	return true
}
