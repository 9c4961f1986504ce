package q6

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/summary"
)

// Recovery states of one burst.
const (
	notViolated = "not violated" // the bound held: nothing to recover from, no time
	recovered   = "recovered"    // back within the bound for hold, after AfterMs
	unrecovered = "never"        // not back within the bound for hold before the next burst or the end
)

// burstRecovery is what followed one burst.
type burstRecovery struct {
	window
	State   string
	AfterMs float64 // recovered: from the burst's end to the first window of the compliant run (0: at once)
	WorstMs float64 // the worst window TTFT p99 between this burst and the next (NaN: none)
	DrainMs float64 // from the burst's end until as few requests waited for a first token as before it
}

// recoveries reads each burst's recovery on the windowed series of the
// phase's requests: windows between the burst's start and the next
// burst (or the phase's end) are scanned; if one breaks the bound (TTFT
// p99 above it, or errors) the recovery is the start of the window after
// the last that broke it — if the compliant run that follows lasts hold
// before the next burst — measured from the burst's end, to the window
// step. A burst whose windows all held is "not violated": it has no
// recovery time, rather than the width of a window.
func (q *q6) recoveries(p summary.Phase, prs []record.Request, bound float64) ([]burstRecovery, error) {
	ws, err := series.Compute(prs, q.cfg.Series)
	if err != nil {
		return nil, err
	}
	bs := bursts(q.cfg.Schedule, p.Start)
	drains := drainEnds(prs, bs)
	var out []burstRecovery
	for i, b := range bs {
		until := p.Start + q.cfg.Schedule.Duration
		if i+1 < len(bs) {
			until = bs[i+1].Start
		}
		r := burstRecovery{window: b, WorstMs: math.NaN(), DrainMs: record.Millis(drains[i] - b.End)}
		in := slices.DeleteFunc(slices.Clone(ws), func(w series.Window) bool {
			return w.StartNS < int64(b.Start) || w.EndNS > int64(until)
		})
		q.judgeRecovery(&r, in, bound)
		out = append(out, r)
	}
	return out, nil
}

// judgeRecovery sets r's state from the windows between its burst and
// the next.
func (q *q6) judgeRecovery(r *burstRecovery, ws []series.Window, bound float64) {
	last := -1
	for i, w := range ws {
		// the window's p99 counts a failed request as +∞ (series.Window)
		if p99 := w.TTFTP99; !math.IsNaN(p99) && (math.IsNaN(r.WorstMs) || p99 > r.WorstMs) {
			r.WorstMs = p99
		}
		if w.Errors > 0 || w.Count > 0 && !(w.TTFTP99 <= bound) {
			last = i
		}
	}
	switch {
	case last < 0:
		r.State = notViolated
	case last == len(ws)-1 || time.Duration(ws[len(ws)-1].EndNS-ws[last+1].StartNS) < q.cfg.Hold:
		r.State = unrecovered
	default:
		r.State, r.AfterMs = recovered, max(record.Millis(time.Duration(ws[last+1].StartNS)-r.End), 0)
	}
}

// drainEnds is, per burst, when the requests waiting for a first token
// were back to as few as the most waiting in the second before the burst
// (none before the first): the end of the burst's drain. A request
// waits from its intended send to its first token (to its end when it
// streamed none).
func drainEnds(prs []record.Request, bs []window) []time.Duration {
	w := newWaiting(prs)
	out := make([]time.Duration, len(bs))
	for i, b := range bs {
		pre := w.maxIn(b.Start-time.Second, b.Start)
		out[i] = w.firstAtMost(b.End, pre)
	}
	return out
}

// waiting is the number of requests waiting for a first token over
// time, as its steps.
type waiting struct {
	at    []time.Duration // when the count changes
	depth []int           // the count from at[i] on
}

func newWaiting(prs []record.Request) waiting {
	type edge struct {
		at    int64
		delta int
	}
	edges := make([]edge, 0, 2*len(prs))
	for i := range prs {
		r := &prs[i]
		end := r.FirstToken
		if end == 0 {
			end = r.EndNS
		}
		if end > r.IntendedNS {
			edges = append(edges, edge{r.IntendedNS, 1}, edge{end, -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Compare(a.at, b.at) })
	var w waiting
	d := 0
	for i, e := range edges {
		d += e.delta
		if i+1 < len(edges) && edges[i+1].at == e.at {
			continue // one step per instant
		}
		w.at, w.depth = append(w.at, time.Duration(e.at)), append(w.depth, d)
	}
	return w
}

// at is the count at t.
func (w waiting) countAt(t time.Duration) int {
	i, found := slices.BinarySearch(w.at, t)
	if !found {
		i--
	}
	if i < 0 {
		return 0
	}
	return w.depth[i]
}

// maxIn is the most waiting at once in [from, to).
func (w waiting) maxIn(from, to time.Duration) int {
	m := w.countAt(from)
	for i, t := range w.at {
		if t > from && t < to {
			m = max(m, w.depth[i])
		}
	}
	return m
}

// firstAtMost is the first instant from t on when at most n wait (the
// last change when that never comes).
func (w waiting) firstAtMost(t time.Duration, n int) time.Duration {
	if w.countAt(t) <= n {
		return t
	}
	last := t
	for i, at := range w.at {
		if at > t {
			last = at
			if w.depth[i] <= n {
				return at
			}
		}
	}
	return last
}

// recoveryMetrics fold the bursts' recoveries: the mean and the worst
// over the bursts that broke the bound, never when one of them never
// recovered, not measurable when none broke it (no time to report); and
// how many broke it and how many never recovered.
func recoveryMetrics(rs []burstRecovery, step time.Duration) (mean, worst, violated, never result.Metric) {
	var after []float64
	nv, nn := 0, 0
	for _, r := range rs {
		switch r.State {
		case recovered:
			after = append(after, r.AfterMs)
			nv++
		case unrecovered:
			nv++
			nn++
		}
	}
	violated = defViolated.Measure(float64(nv), max(len(rs), 1), "")
	never = defUnrecovered.Measure(float64(nn), max(len(rs), 1), "")
	switch {
	case len(rs) == 0:
		why := "no burst"
		return defRecoverMean.NotMeasurable(why), defRecoverMax.NotMeasurable(why), violated, never
	case nn > 0:
		why := fmt.Sprintf("%d of %d bursts never came back within the bound for the hold time before the next burst or the end", nn, len(rs))
		return defRecoverMean.Never(why), defRecoverMax.Never(why), violated, never
	case nv == 0:
		why := "no burst pushed the TTFT p99 above its bound: nothing to recover from"
		return defRecoverMean.NotMeasurable(why), defRecoverMax.NotMeasurable(why), violated, never
	}
	sum := 0.0
	for _, a := range after {
		sum += a
	}
	res := record.Millis(step)
	return defRecoverMean.Measure(sum/float64(len(after)), len(after), "").WithResolution(res),
		defRecoverMax.Measure(slices.Max(after), len(after), "").WithResolution(res), violated, never
}
