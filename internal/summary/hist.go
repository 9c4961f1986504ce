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

// distBatch is how many values a dist buffers before it records them.
const distBatch = 256

// dist is an HDR histogram of milliseconds, recorded in microseconds, with
// the exact maximum kept beside it. Values are buffered and recorded
// distBatch at a time: a histogram's counts span ~190 KB, and a request
// feeds a dozen of them, so recording each value as it comes missed the
// cache a dozen times per request (4–5 % of a run's CPU at 5,000 req/s);
// a batch brings a histogram's lines in once. Every reading flushes first,
// so what a dist reports is what it would have without the buffer.
type dist struct {
	h   *hdrhistogram.Histogram
	max float64
	buf []int64 // µs, not yet recorded
}

func newDist() *dist {
	return &dist{h: hdrhistogram.New(histLowestUS, histHighestUS, histSigFigs)}
}

// add records ms; negative values are clamped to 0 and values beyond the
// range to its top.
func (d *dist) add(ms float64) {
	if math.IsNaN(ms) {
		return
	}
	us := int64(math.Round(ms * 1000))
	us = min(max(us, 0), histHighestUS)
	if d.buf == nil {
		d.buf = make([]int64, 0, distBatch)
	}
	d.buf = append(d.buf, us)
	if len(d.buf) == distBatch {
		d.flush()
	}
	d.max = max(d.max, ms)
}

// flush records the buffered values.
func (d *dist) flush() {
	for _, us := range d.buf {
		d.h.RecordValue(us)
	}
	d.buf = d.buf[:0]
}

// merge adds o's recorded values to d.
func (d *dist) merge(o *dist) {
	d.flush()
	o.flush()
	d.h.Merge(o.h)
	d.max = max(d.max, o.max)
}

func (d *dist) count() int64 { return d.h.TotalCount() + int64(len(d.buf)) }

func (d *dist) quantile(q float64) float64 {
	if d.count() == 0 {
		return 0
	}
	d.flush()
	// HDR reports a bucket's highest equivalent value; never above the exact max.
	return min(float64(d.h.ValueAtQuantile(q))/1000, d.max)
}

// latency summarises d in milliseconds.
func (d *dist) latency() record.Latency {
	n := d.count()
	if n == 0 {
		return record.Latency{}
	}
	d.flush()
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
