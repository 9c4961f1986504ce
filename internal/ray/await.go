package ray

import (
	"context"
	"fmt"
	"io"
	"time"
)

// AwaitOptions tune Await; the zero value is usable.
type AwaitOptions struct {
	// Logs receives the job's log text as it appears (nil: discarded).
	Logs io.Writer
	// MinPoll and MaxPoll bound the polling interval, which grows ×1.5
	// from MinPoll and starts over when the status changes (defaults
	// 100ms and 2s). Log growth does not reset it: the log endpoint
	// answers the whole log each time.
	MinPoll, MaxPoll time.Duration
	// StopWait bounds how long Await waits for a stopped job to end
	// (default 30s).
	StopWait time.Duration
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

// Await follows job id until it ends and returns its last status and
// whole log. When ctx is cancelled it stops the job, waits up to
// StopWait for it to end and returns what it has with ctx's error.
func (c *Client) Await(ctx context.Context, id string, o AwaitOptions) (Job, string, error) {
	o.defaults()
	f := &follower{c: c, id: id, o: o}
	poll := o.MinPoll
	for ctx.Err() == nil {
		job, changed, err := f.step(ctx)
		if err != nil && ctx.Err() == nil {
			return job, f.logs, err
		}
		if Terminal(job.Status) {
			return job, f.logs, nil
		}
		poll = min(time.Duration(float64(poll)*1.5), o.MaxPoll)
		if changed {
			poll = o.MinPoll
		}
		o.Sleep(ctx, poll)
	}
	job, err := f.stop()
	if err != nil {
		return job, f.logs, fmt.Errorf("%w (and stopping job %s: %v)", ctx.Err(), id, err)
	}
	return job, f.logs, ctx.Err()
}

// follower polls one job and forwards its new log text.
type follower struct {
	c    *Client
	id   string
	o    AwaitOptions
	logs string
	last string // status seen last
}

// step reads the status and then the logs (so a terminal status comes
// with the complete log); changed is true when the status moved.
func (f *follower) step(ctx context.Context) (Job, bool, error) {
	job, err := f.c.Job(ctx, f.id)
	if err != nil {
		return job, false, err
	}
	changed := job.Status != f.last
	f.last = job.Status
	logs, err := f.c.Logs(ctx, f.id)
	if err != nil {
		return job, changed, err
	}
	if len(logs) < len(f.logs) || logs[:len(f.logs)] != f.logs {
		f.logs = "" // rotated or replaced: forward it whole
	}
	if len(logs) > len(f.logs) {
		io.WriteString(f.o.Logs, logs[len(f.logs):])
		f.logs = logs
	}
	return job, changed, nil
}

// stop asks the cluster to stop the job and follows it until it ends or
// StopWait passes, with a context of its own (the run's is done).
func (f *follower) stop() (Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), f.o.StopWait)
	defer cancel()
	if _, err := f.c.Stop(ctx, f.id); err != nil {
		return Job{Status: f.last}, err
	}
	for {
		job, _, err := f.step(ctx)
		if err != nil || Terminal(job.Status) {
			return job, err
		}
		f.o.Sleep(ctx, f.o.MinPoll)
		if ctx.Err() != nil {
			return job, fmt.Errorf("job %s did not end within %s of the stop", f.id, f.o.StopWait)
		}
	}
}
