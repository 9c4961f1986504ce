package run

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/summary"
)

// liveEvery is the refresh period of the in-place progress line.
const liveEvery = 250 * time.Millisecond

// progress starts the progress reporter and returns its stop function.
func (rn *Runner) progress(start time.Time, sent *atomic.Int64, col *summary.Collector) (stop func()) {
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
		for {
			select {
			case <-done:
				if rn.Live {
					fmt.Fprint(rn.Out, "\r\033[K")
				}
				return
			case <-t.C:
				rn.printProgress(start, sent.Load(), col.Live())
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (rn *Runner) printProgress(start time.Time, sent int64, l summary.Live) {
	el := time.Since(start)
	line := fmt.Sprintf("%6.1fs  sent %d  done %d  errors %d  %.1f req/s  p99 E2E %.0f ms",
		el.Seconds(), sent, l.Done, l.Errors, float64(sent)/el.Seconds(), l.E2EP99Ms)
	if rn.Live {
		fmt.Fprint(rn.Out, "\r\033[K"+line)
		return
	}
	fmt.Fprintln(rn.Out, line)
}
