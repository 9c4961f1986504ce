package ray

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// AwaitOptions tune Await; the zero value is usable.
type AwaitOptions struct {
	// Logs receives the job's log text once, in order, as it is tailed
	// (nil: discarded). A write error ends the wait (the job is stopped:
	// its log can no longer be read).
	Logs io.Writer
	// MinPoll and MaxPoll bound the status polling interval, which grows
	// ×1.5 from MinPoll and starts over when the status changes (defaults
	// 100ms and 2s). The log is streamed, not polled.
	MinPoll, MaxPoll time.Duration
	// StopWait bounds how long Await waits for a stopped job to end
	// (default 30s).
	StopWait time.Duration
	// LogWait bounds how long Await waits, once the job has ended, for
	// the rest of its log (default 60s).
	LogWait time.Duration
	// Sleep waits d or until ctx is done (default: a timer); tests inject it.
	Sleep func(ctx context.Context, d time.Duration)
}

func (o *AwaitOptions) defaults() {
	if o.MinPoll <= 0 {
		o.MinPoll = 100 * time.Millisecond
	}
	if o.MaxPoll < o.MinPoll {
		o.MaxPoll = max(2*time.Second, o.MinPoll)
	}
	if o.StopWait <= 0 {
		o.StopWait = 30 * time.Second
	}
	if o.LogWait <= 0 {
		o.LogWait = 60 * time.Second
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Logs == nil {
		o.Logs = io.Discard
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Await follows job id until it ends, its log streamed to o.Logs (see
// tail), and returns its last status once the whole log was read. When
// ctx is cancelled it stops the job, waits up to StopWait for it to end
// and returns what it has with ctx's error.
func (c *Client) Await(ctx context.Context, id string, o AwaitOptions) (Job, error) {
	o.defaults()
	tctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	end := newJobEnd()
	tl := &tail{c: c, id: id, w: o.Logs, o: &o, end: end}
	tw := &tailWait{ch: make(chan error, 1), cancel: cancel}
	go func() { tw.ch <- tl.run(tctx) }()
	w := &watcher{c: c, id: id, o: &o, end: end}
	job, err := w.watch(ctx, tw)
	switch {
	case tw.failed():
		job, _ = w.stop() // its records can no longer be read: the job must not go on
		return job, tw.err
	case ctx.Err() != nil:
		var serr error
		if job, serr = w.stop(); serr != nil {
			end.abandon() // no one will see the end: the log's fallback must not wait for it
			err = fmt.Errorf("%w (and stopping job %s: %v)", ctx.Err(), id, serr)
		} else {
			err = ctx.Err()
		}
		tw.wait(o.StopWait, id)
		return job, err
	case err != nil:
		tw.wait(0, id)
		return job, err
	}
	return job, tw.wait(o.LogWait, id)
}

// tailWait is the tail's outcome as Await sees it.
type tailWait struct {
	ch     chan error
	cancel context.CancelFunc
	done   bool
	err    error
}

// poll reports whether the tail has returned (without waiting).
func (t *tailWait) poll() bool {
	if !t.done {
		select {
		case t.err = <-t.ch:
			t.done = true
		default:
		}
	}
	return t.done
}

// failed reports whether the tail returned an error.
func (t *tailWait) failed() bool { return t.poll() && t.err != nil }

// wait waits up to d for the tail's end, then gives up on it; it
// returns the tail's error, or why the log is incomplete.
func (t *tailWait) wait(d time.Duration, id string) error {
	if t.done {
		return t.err
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case t.err = <-t.ch:
	case <-timer.C:
		t.cancel()
		<-t.ch
		t.err = fmt.Errorf("ray: job %s ended, but the rest of its log did not come within %s", id, d)
	}
	t.done = true
	return t.err
}

// jobEnd is closed once the job is seen in a terminal status, by the
// watcher's polls or the tail's own look after a stream: the one poller
// of the job's status while the log's fallback waits for its end. When
// the watcher gives up without seeing it (a failed stop), it is
// abandoned instead.
type jobEnd struct {
	once, gave sync.Once
	ch, gone   chan struct{}
}

func newJobEnd() *jobEnd { return &jobEnd{ch: make(chan struct{}), gone: make(chan struct{})} }

// mark records that the job ended.
func (e *jobEnd) mark() { e.once.Do(func() { close(e.ch) }) }

// abandon records that no one will see the job end.
func (e *jobEnd) abandon() { e.gave.Do(func() { close(e.gone) }) }

// wait waits for the job's end: nil once it was seen, an error when it
// was abandoned or ctx is done first.
func (e *jobEnd) wait(ctx context.Context, id string) error {
	select {
	case <-e.ch:
		return nil
	case <-e.gone:
		select {
		case <-e.ch: // seen after all
			return nil
		default:
		}
		return fmt.Errorf("ray: job %s was not seen to end, so the rest of its log was not read", id)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watcher polls one job's status.
type watcher struct {
	c    *Client
	id   string
	o    *AwaitOptions
	end  *jobEnd // marked when a poll finds the job ended
	last string  // status seen last
}

// watch polls until the job ends, ctx is done, a poll fails, or the
// tail of the log fails.
func (w *watcher) watch(ctx context.Context, tw *tailWait) (Job, error) {
	poll := w.o.MinPoll
	var job Job
	for ctx.Err() == nil && !tw.failed() {
		var err error
		if job, err = w.c.Job(ctx, w.id); err != nil {
			if ctx.Err() != nil {
				break
			}
			return job, err
		}
		if Terminal(job.Status) {
			w.end.mark()
			return job, nil
		}
		poll = min(time.Duration(float64(poll)*1.5), w.o.MaxPoll)
		if job.Status != w.last {
			poll = w.o.MinPoll
		}
		w.last = job.Status
		w.o.Sleep(ctx, poll)
	}
	return job, ctx.Err()
}

// stop asks the cluster to stop the job and follows it until it ends or
// StopWait passes, with a context of its own (the run's may be done).
func (w *watcher) stop() (Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), w.o.StopWait)
	defer cancel()
	if _, err := w.c.Stop(ctx, w.id); err != nil {
		return Job{Status: w.last}, err
	}
	for {
		job, err := w.c.Job(ctx, w.id)
		if err == nil && Terminal(job.Status) {
			w.end.mark()
		}
		if err != nil || Terminal(job.Status) {
			return job, err
		}
		w.o.Sleep(ctx, w.o.MinPoll)
		if ctx.Err() != nil {
			return job, fmt.Errorf("job %s did not end within %s of the stop", w.id, w.o.StopWait)
		}
	}
}
