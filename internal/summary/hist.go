package summary

import (
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/sagebench/sagebench/internal/record"
)

// Histogram range: 1 µs to 1 h, 3 significant figures.
const (
	histLowestUS  = 1
	histHighestUS = 3600 * 1_000_000
	histSigFigs   = 3
)

// dist is an HDR histogram of milliseconds, recorded in microseconds, with
// the exact maximum kept beside it. The histogram (188 KB of counts) is
// made by the first value: a group has five dists, and most groups use
// two of them (an embeddings request has no TTFT, TPOT or ITL).
type dist struct {
	h   *hdrhistogram.Histogram // nil until the first value
	max float64
}

func newDist() *dist { return &dist{} }

func (d *dist) hist() *hdrhistogram.Histogram {
	if d.h == nil {
		d.h = hdrhistogram.New(histLowestUS, histHighestUS, histSigFigs)
	}
	return d.h
}

// add records ms; negative values are clamped to 0 and values beyond the
// range to its top.
func (d *dist) add(ms float64) {
	if math.IsNaN(ms) {
		return
	}
	us := int64(math.Round(ms * 1000))
	us = min(max(us, 0), histHighestUS)
	d.hist().RecordValue(us)
	d.max = max(d.max, ms)
}

// merge adds o's recorded values to d.
func (d *dist) merge(o *dist) {
	if o.h == nil {
		return
	}
	d.hist().Merge(o.h)
	d.max = max(d.max, o.max)
}

func (d *dist) count() int64 {
	if d.h == nil {
		return 0
	}
	return d.h.TotalCount()
}

func (d *dist) quantile(q float64) float64 {
	if d.count() == 0 {
		return 0
	}
	// HDR reports a bucket's highest equivalent value; never above the exact max.
	return min(float64(d.h.ValueAtQuantile(q))/1000, d.max)
}

// quantileWithFailed is the nearest-rank q-quantile (q in (0, 1]) of d's
// values and failed more that count +∞: +Inf when the rank ⌈q·n⌉ falls on
// them, NaN when there is no value at all.
func (d *dist) quantileWithFailed(q float64, failed int) float64 {
	ok := int(d.count())
	n := ok + max(failed, 0)
	if n == 0 {
		return math.NaN()
	}
	rank := max(int(math.Ceil(q*float64(n)-1e-9)), 1)
	if rank > ok {
		return math.Inf(1)
	}
	return d.quantile(100 * float64(rank) / float64(ok))
}

// latency summarises d in milliseconds.
func (d *dist) latency() record.Latency {
	n := d.count()
	if n == 0 {
		return record.Latency{}
	}
	return record.Latency{
		Count: n,
		Mean:  d.h.Mean() / 1000,
		P50:   d.quantile(50),
		P90:   d.quantile(90),
		P95:   d.quantile(95),
		P99:   d.quantile(99),
		P999:  d.quantile(99.9),
		Max:   d.max,
	}
}
