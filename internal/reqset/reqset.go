package reqset

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/quantile"
	"github.com/sagebench/sagebench/internal/record"
)

// Set collects records; safe for concurrent use.
type Set struct {
	mu sync.Mutex
	rs []record.Request
}

// Add keeps r.
func (s *Set) Add(r record.Request) {
	s.mu.Lock()
	s.rs = append(s.rs, r)
	s.mu.Unlock()
}

// Grow makes room for n more records, so that a run that knows its
// schedule does not copy every record kept so far each time the set
// outgrows its array.
func (s *Set) Grow(n int) {
	s.mu.Lock()
	s.rs = slices.Grow(s.rs, n)
	s.mu.Unlock()
}

// All returns a copy of the records kept so far.
func (s *Set) All() []record.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rs)
}

// View returns the records kept so far without copying them (a run's
// records are large): later Adds go past its end and never change it.
// It is for reading only.
func (s *Set) View() []record.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clip(s.rs)
}

// Where returns the records of rs that keep says to keep.
// The result is a new array of the exact size (records are large: a run's
// are copied once, not again at every growth); nil when none is kept.
func Where(rs []record.Request, keep func(*record.Request) bool) []record.Request {
	n := 0
	for i := range rs {
		if keep(&rs[i]) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]record.Request, 0, n)
	for i := range rs {
		if keep(&rs[i]) {
			out = append(out, rs[i])
		}
	}
	return out
}

// Stats summarise a selection of records. Latencies are in ms; a
// quantile of no values is NaN.
type Stats struct {
	N, OK, Met                 int
	QueueN                     int // samples behind the queue quantiles
	E2EMean, E2EP50, E2EP95    float64
	E2EP99, TTFTP50, TTFTP99   float64
	QueueP50, QueueP99         float64
	SuccessRate, SLOAttainment float64
	// TailP50, TailP95, TailP99 are the E2E quantiles over every request,
	// a failed one counting +∞ (nearest rank): +Inf when failures reach
	// the rank, NaN with no request. The E2EPxx above are the successes'.
	TailP50, TailP95, TailP99 float64
	// TTFTTailP99 is the TTFT p99 over the requests with a first token
	// and the failed ones of a type that streams (protocol.Streams), a
	// failure counting +∞; TTFTP99 is the successes'.
	TTFTTailP99 float64
}

// Measure folds rs into Stats. TTFT counts successful requests with a
// first token; queue wait those that reported one.
func Measure(rs []record.Request) Stats {
	s := Stats{N: len(rs)}
	var e2e, ttft, queue []float64
	failedStreams := 0
	for i := range rs {
		r := &rs[i]
		if r.SLOMet {
			s.Met++
		}
		if !r.OK {
			if protocol.Streams(r.Type) {
				failedStreams++
			}
			continue
		}
		s.OK++
		e2e = append(e2e, r.E2EMs)
		if r.FirstToken > 0 {
			ttft = append(ttft, r.TTFTMs)
		}
		if r.QueueMs != nil {
			queue = append(queue, *r.QueueMs)
		}
	}
	s.E2EMean = mean(e2e)
	// The slices are Measure's own: sorted once, in place, for all their
	// quantiles.
	slices.Sort(e2e)
	slices.Sort(ttft)
	slices.Sort(queue)
	s.E2EP50, s.E2EP95, s.E2EP99 = quantile.OfSorted(e2e, 0.5), quantile.OfSorted(e2e, 0.95), quantile.OfSorted(e2e, 0.99)
	s.TTFTP50, s.TTFTP99 = quantile.OfSorted(ttft, 0.5), quantile.OfSorted(ttft, 0.99)
	s.QueueP50, s.QueueP99 = quantile.OfSorted(queue, 0.5), quantile.OfSorted(queue, 0.99)
	s.QueueN = len(queue)
	s.TailP50, s.TailP95, s.TailP99 = tailOf(e2e, s.N-s.OK, 0.5), tailOf(e2e, s.N-s.OK, 0.95), tailOf(e2e, s.N-s.OK, 0.99)
	s.TTFTTailP99 = tailOf(ttft, failedStreams, 0.99)
	if s.N > 0 {
		s.SuccessRate, s.SLOAttainment = float64(s.OK)/float64(s.N), float64(s.Met)/float64(s.N)
	}
	return s
}

// tailOf is the nearest-rank q-quantile of the ascending ok and failed
// more values counting +∞: failures sort last, so rank r is ok's r-th or
// a failure past them (NaN: no value).
func tailOf(ok []float64, failed int, q float64) float64 {
	n := len(ok) + failed
	switch r := quantile.Rank(n, q); {
	case n == 0:
		return math.NaN()
	case r > len(ok):
		return math.Inf(1)
	default:
		return ok[r-1]
	}
}

// Goodput is Met per second of d (0 when d ≤ 0).
func (s Stats) Goodput(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(s.Met) / d.Seconds()
}

// Quantile is the q-quantile of xs by the one definition (package
// quantile: nearest rank; NaN for none); xs is not modified.
func Quantile(xs []float64, q float64) float64 { return quantile.Of(xs, q) }

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}
