package run

import (
	"context"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/redact"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/traffic"
)

// sinkQueue is how many finished requests may wait for the sink; a full
// queue makes Record block (back-pressure on the hits, which the schedule
// lag of later arrivals would show). 4,096 records (1.7 MB: the buffer is
// allocated whole, cycled through, and scanned by every GC) are 0.8 s at
// 5,000 req/s, 160 sink polls.
const sinkQueue = 1 << 12

// sinkPoll is how often the sink takes what is queued. Polling, instead
// of waiting on the channel, spares a goroutine wake-up per request: a
// send into a buffered channel nobody waits on readies no goroutine. At
// 5,000 req/s a poll takes ~25 requests.
const sinkPoll = 5 * time.Millisecond

// sink takes finished requests off the request goroutines: Record hands
// one over a channel and returns; one goroutine (every sinkPoll) adds it
// to the summary and encodes it into requests.jsonl, so neither the
// collector nor the writer is contended and no hit waits on a file write. A request
// recorded after close (a hit that outlived the workload's Run) is
// dropped from both, so they always agree.
type sink struct {
	col      *summary.Collector
	w        *record.RequestWriter
	red      *redact.Redactor  // the target's rule, applied to every record
	seen     map[string]string // clean forms of engine and node ids (see cleanRequest)
	recs     chan record.Request
	shutting chan struct{} // closed with recs: the loop stops waiting for the next poll
	gate     sync.RWMutex
	shut     bool
	done     chan struct{}
	err      error // the writer's first error, set by the loop
	output   traffic.OutputCheck
	turns    traffic.Turns // the turns of multi-turn sessions, for their section
}

func newSink(col *summary.Collector, w *record.RequestWriter, red *redact.Redactor) *sink {
	s := &sink{col: col, w: w, red: red, seen: map[string]string{}, recs: make(chan record.Request, sinkQueue), shutting: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *sink) loop() {
	defer close(s.done)
	tick := time.NewTicker(sinkPoll)
	defer tick.Stop()
	for {
		select {
		case r, ok := <-s.recs:
			if !ok {
				return
			}
			s.add(&r)
			continue
		default:
		}
		select {
		case <-tick.C:
		case <-s.shutting:
		}
	}
}

func (s *sink) add(r *record.Request) { // r is the loop's own copy: cleaned in place
	cleanRequest(s.red, s.seen, r)
	s.col.Add(*r)
	s.output.Add(r)
	s.turns.Add(r)
	if err := s.w.Write(*r); err != nil && s.err == nil {
		s.err = err
	}
}

// Record is the workload's Env.Record.
func (s *sink) Record(r record.Request) {
	s.gate.RLock()
	defer s.gate.RUnlock()
	if !s.shut {
		s.recs <- r
	}
}

// close stops accepting requests, waits until every accepted one is in
// the summary and the writer, closes the writer and returns the first
// error of either.
func (s *sink) close() error {
	s.gate.Lock()
	s.shut = true
	close(s.recs)
	close(s.shutting)
	s.gate.Unlock()
	<-s.done
	err := s.w.Close()
	if s.err != nil {
		return s.err
	}
	return err
}

// watch cancels the run as soon as the writer fails (a full disk shows
// within one flush), so a run whose records cannot be written stops
// sending instead of going on for its whole schedule.
func (s *sink) watch(ctx context.Context, cancel context.CancelCauseFunc) {
	select {
	case <-s.w.Failed():
		cancel(s.w.Err())
	case <-ctx.Done():
	case <-s.done:
	}
}
