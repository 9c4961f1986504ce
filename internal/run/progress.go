package run

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/summary"
)

// liveEvery is the refresh period of the in-place progress line.
const liveEvery = 250 * time.Millisecond

// progress starts the progress reporter and returns its stop function.
// Each line names the phase the run is in (the phase of the request that
// ended last, as its workload names it: a policy, the capacity probe,
// the soak) and the completion rate over the last window (since the
// line before), not since the start.
func (rn *Runner) progress(start time.Time, sent *atomic.Int64, col *summary.Collector, label string) (stop func()) {
	every := rn.ProgressEvery
	if rn.Live {
		every = liveEvery
	}
	if every <= 0 || rn.Out == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		w := window{at: start}
		for {
			select {
			case <-done:
				if rn.Live {
					fmt.Fprint(rn.Out, "\r\033[K")
				}
				return
			case now := <-t.C:
				l := col.Live()
				rn.printLine(progressLine(now.Sub(start), sent.Load(), l, w.rate(now, l.Done), label))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// window is the previous progress line's completions, for the rate over
// the window since.
type window struct {
	at   time.Time
	done int
}

// rate is the completions per second since the previous call (the
// window), and moves the window on.
func (w *window) rate(now time.Time, done int) float64 {
	d := now.Sub(w.at).Seconds()
	r := 0.0
	if d > 0 {
		r = float64(done-w.done) / d
	}
	w.at, w.done = now, done
	return r
}

// progressLine is one progress line: elapsed time, the phase (as label
// names it: "policy fifo"; "phase capacity" without a label), counts, the
// completion rate over the last window and the p99 E2E so far.
func progressLine(el time.Duration, sent int64, l summary.Live, rate float64, label string) string {
	phase := ""
	if l.Phase != "" {
		if label == "" {
			label = "phase"
		}
		phase = "  " + label + " " + l.Phase
	}
	return fmt.Sprintf("%6.1fs%s  sent %d  done %d  errors %d  now %.1f req/s  p99 E2E %s",
		el.Seconds(), phase, sent, l.Done, l.Errors, rate, p99Text(l.E2EP99Ms))
}

// p99Text is the progress line's p99: failures count +∞ (summary.Live).
func p99Text(ms float64) string {
	switch {
	case math.IsNaN(ms):
		return "–"
	case math.IsInf(ms, 1):
		return "+∞ (failures at its rank)"
	}
	return fmt.Sprintf("%.0f ms", ms)
}

func (rn *Runner) printLine(line string) {
	if rn.Live {
		fmt.Fprint(rn.Out, "\r\033[K"+line)
		return
	}
	fmt.Fprintln(rn.Out, line)
}
