package openai

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// RetryPolicy is the client's own retry of a failed request: off (every
// request sent exactly once) unless MaxAttempts > 1. A retried request is
// a new POST: when the target had already read the earlier one
// (dropped_after_send, timeout, 5xx, truncated) it may execute both —
// docs/requests.md. Every attempt is kept in the Result (Tries) and in
// the record.
type RetryPolicy struct {
	// MaxAttempts bounds the sends of one request (first included);
	// 0 or 1: sent once.
	MaxAttempts int     `yaml:"max_attempts" json:"max_attempts,omitempty"`
	Backoff     Backoff `yaml:"backoff" json:"backoff,omitzero"`
	// On lists what is retried: connect, reset, dropped_after_send,
	// timeout, 5xx, 429, truncated (a stream is retried only before its
	// first token). Empty: connect, reset, dropped_after_send, timeout,
	// 5xx and 429.
	On []string `yaml:"on" json:"on,omitempty"`
	// Budget caps the retries at this fraction of the requests begun so
	// far (0.2: one retry per five requests); 0: no cap. A retry the
	// budget refuses leaves the failure as it is, with a note.
	Budget float64 `yaml:"budget" json:"budget,omitempty"`
	// HedgeAfter, when > 0, sends a second copy of a non-streamed request
	// still unanswered after this long; the first answer wins and the
	// other is cancelled. Hedges count as attempts.
	HedgeAfter time.Duration `yaml:"hedge_after" json:"hedge_after,omitempty"`
}

// Backoff is the wait before a retry: Base × 2^(n−1) for the n-th retry,
// at most Max, less a random fraction up to Jitter of it.
type Backoff struct {
	Base   time.Duration `yaml:"base" json:"base,omitempty"`     // 0 → 50ms
	Max    time.Duration `yaml:"max" json:"max,omitempty"`       // 0 → 2s
	Jitter float64       `yaml:"jitter" json:"jitter,omitempty"` // in [0,1]; 0: none
}

// retryOn maps the policy's names to error classes.
var retryOn = map[string]string{
	"connect": ClassConnect, "reset": ClassReset, "dropped_after_send": ClassDropped, "timeout": ClassTimeout,
	"5xx": ClassHTTP5xx, "429": ClassHTTP429, "truncated": ClassTruncated,
}

// defaultRetryOn is On when empty.
var defaultRetryOn = []string{"connect", "reset", "dropped_after_send", "timeout", "5xx", "429"}

// Enabled reports whether the policy may send a request more than once.
func (p RetryPolicy) Enabled() bool { return p.MaxAttempts > 1 || p.HedgeAfter > 0 }

// Validate reports the first problem of p, naming the field.
func (p RetryPolicy) Validate() error {
	switch {
	case p.MaxAttempts < 0 || p.MaxAttempts > 10:
		return fmt.Errorf("target.retry.max_attempts %d is out of range; use 0..10 (0 or 1: sent once)", p.MaxAttempts)
	case p.Backoff.Base < 0 || p.Backoff.Max < 0:
		return errors.New("target.retry.backoff.base and max must be >= 0 (0 = default)")
	case p.Backoff.Jitter < 0 || p.Backoff.Jitter > 1:
		return fmt.Errorf("target.retry.backoff.jitter %g is out of range; use 0..1", p.Backoff.Jitter)
	case p.Budget < 0:
		return fmt.Errorf("target.retry.budget %g must be >= 0 (a fraction of requests; 0 = no cap)", p.Budget)
	case p.HedgeAfter < 0:
		return errors.New("target.retry.hedge_after must be >= 0 (0 = no hedging)")
	}
	for _, o := range p.On {
		if _, ok := retryOn[o]; !ok {
			return fmt.Errorf("target.retry.on: %q is not one of connect, reset, dropped_after_send, timeout, 5xx, 429, truncated", o)
		}
	}
	return nil
}

// Try is one attempt of a request.
type Try struct {
	N          int       // 1-based
	Hedge      bool      // sent as a hedge while an earlier attempt was in flight
	Sent, End  time.Time // Sent: connection obtained (Start when none was)
	Status     int
	ErrClass   string // "" when ok
	Replays    int    // net/http's nothing-written replays of this attempt
	Superseded bool   // a hedge's loser, cancelled
}

// retrier applies a client's RetryPolicy.
type retrier struct {
	p       RetryPolicy
	on      []string // error classes retried
	sleep   func(ctx context.Context, d time.Duration) error
	jitter  func() float64 // in [0,1)
	mu      sync.Mutex
	begun   int // requests begun
	retries int // retries sent
}

func newRetrier(p RetryPolicy) *retrier {
	r := &retrier{p: p, sleep: sleepCtx, jitter: rand.Float64}
	names := p.On
	if len(names) == 0 {
		names = defaultRetryOn
	}
	for _, n := range names {
		r.on = append(r.on, retryOn[n])
	}
	if r.p.Backoff.Base == 0 {
		r.p.Backoff.Base = 50 * time.Millisecond
	}
	if r.p.Backoff.Max == 0 {
		r.p.Backoff.Max = 2 * time.Second
	}
	return r
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait is the backoff before the n-th retry (n ≥ 1).
func (r *retrier) wait(n int) time.Duration {
	d := r.p.Backoff.Base << min(n-1, 20)
	if d > r.p.Backoff.Max || d <= 0 {
		d = r.p.Backoff.Max
	}
	return d - time.Duration(r.p.Backoff.Jitter*r.jitter()*float64(d))
}

// allow takes one retry from the budget.
func (r *retrier) allow() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p.Budget > 0 && float64(r.retries+1) > r.p.Budget*float64(r.begun) {
		return false
	}
	r.retries++
	return true
}

func (r *retrier) begin() {
	r.mu.Lock()
	r.begun++
	r.mu.Unlock()
}

// retryable reports whether res may be retried: its class is in the
// policy, and a stream gave nothing to the user yet.
func (r *retrier) retryable(res *Result) bool {
	return res.Err != nil && res.FirstToken.IsZero() && slices.Contains(r.on, res.ErrClass)
}

// attemptFunc performs one attempt; n is its number (sent in
// X-Sagebench-Attempt when the policy is on).
type attemptFunc func(ctx context.Context, n int) Result

// HeaderAttempt carries the attempt number of a request sent under a
// retry policy (1 for the first), so that a target can tell a retry.
const HeaderAttempt = "X-Sagebench-Attempt"

// attemptHeader is the value of HeaderAttempt for attempt n.
func attemptHeader(n int) []string { return []string{strconv.Itoa(n)} }

// do runs attempts under the client's policy and returns the outcome:
// the final attempt's, with the first attempt's Start and Sent.
// hedgeable says whether a hedge may run beside the first attempt (not
// for a stream, whose tokens reach the caller as they come).
func (c *Client) do(ctx context.Context, hedgeable bool, once attemptFunc) Result {
	if c.retry == nil {
		res := once(ctx, 0)
		finishTries(&res, nil, 1)
		return res
	}
	c.retry.begin()
	start := time.Now()
	var tries []Try
	for n, retried := 1, 0; ; retried++ {
		res, used := c.attempt(ctx, once, n, hedgeable, &tries)
		n += used
		if !c.retry.retryable(&res) || n > max(c.retry.p.MaxAttempts, 1) {
			return merged(start, res, tries)
		}
		if !c.retry.allow() {
			res.addNote("retry budget spent: not retried")
			return merged(start, res, tries)
		}
		if err := c.retry.sleep(ctx, c.retry.wait(retried+1)); err != nil {
			return merged(start, res, tries)
		}
	}
}

// merged is the outcome last with the start and first send of the
// request: End − Sent is the latency the user saw.
func merged(start time.Time, last Result, tries []Try) Result {
	last.Start = start
	if len(tries) > 0 && !tries[0].Sent.IsZero() {
		last.Sent = tries[0].Sent
	}
	finishTries(&last, tries, len(tries))
	return last
}

// finishTries sets the attempt fields of res.
func finishTries(res *Result, tries []Try, attempts int) {
	if res.Start.IsZero() {
		attempts = 0 // never sent: the request could not be encoded
	}
	res.Attempts = attempts
	if res.Attempt == 0 {
		res.Attempt = attempts
	}
	replays := res.Replays
	if len(tries) > 1 {
		res.Tries = tries
		replays = 0
		for _, t := range tries {
			replays += t.Replays
		}
	}
	res.Replays = replays
}

// tryOf is the Try of one attempt's Result.
func tryOf(res *Result, n int, hedge bool) Try {
	sent := res.Sent
	if sent.IsZero() {
		sent = res.Start
	}
	return Try{N: n, Hedge: hedge, Sent: sent, End: res.End, Status: res.Status, ErrClass: res.ErrClass, Replays: res.Replays}
}

// attempt performs attempt n (and, under a hedging policy, maybe a hedge
// n+1); it returns the outcome and the number of attempts it used.
func (c *Client) attempt(ctx context.Context, once attemptFunc, n int, hedgeable bool, tries *[]Try) (Result, int) {
	if c.retry.p.HedgeAfter <= 0 || !hedgeable {
		res := once(ctx, n)
		res.Attempt = n
		*tries = append(*tries, tryOf(&res, n, false))
		return res, 1
	}
	return c.hedged(ctx, once, n, tries)
}

type attemptOut struct {
	res   Result
	n     int
	hedge bool
}

// hedged sends attempt n and, when it is still unanswered after
// HedgeAfter (and the budget allows), a hedge n+1; the first success
// wins and the other is cancelled (kept as a superseded Try).
func (c *Client) hedged(ctx context.Context, once attemptFunc, n int, tries *[]Try) (Result, int) {
	ch := make(chan attemptOut, 2)
	ctx1, cancel1 := context.WithCancel(ctx)
	ctx2, cancel2 := context.WithCancel(ctx)
	defer cancel1()
	defer cancel2()
	go func() { ch <- attemptOut{once(ctx1, n), n, false} }()
	t := time.NewTimer(c.retry.p.HedgeAfter)
	defer t.Stop()
	select {
	case o := <-ch:
		return keep(tries, o, false), 1
	case <-t.C:
	}
	if !c.retry.allow() {
		o := <-ch
		return keep(tries, o, false), 1
	}
	go func() { ch <- attemptOut{once(ctx2, n+1), n + 1, true} }()
	a := <-ch
	if a.res.Err != nil {
		b := <-ch // a failed on its own: the other decides
		keep(tries, a, false)
		return keep(tries, b, false), 2
	}
	cancel1()
	cancel2()
	b := <-ch
	keep(tries, b, true)
	return keep(tries, a, false), 2
}

// keep appends o's Try (in attempt order) and returns its Result.
func keep(tries *[]Try, o attemptOut, superseded bool) Result {
	o.res.Attempt = o.n
	t := tryOf(&o.res, o.n, o.hedge)
	t.Superseded = superseded
	*tries = append(*tries, t)
	slices.SortFunc(*tries, func(x, y Try) int { return x.N - y.N })
	return o.res
}

// withAttempt is hdr with HeaderAttempt n added (a copy; hdr itself
// when n is 0, i.e. no retry policy).
func withAttempt(hdr http.Header, n int) http.Header {
	if n == 0 {
		return hdr
	}
	h := make(http.Header, len(hdr)+1)
	for k, v := range hdr {
		h[k] = v
	}
	h[HeaderAttempt] = attemptHeader(n)
	return h
}
