package openai

import (
	"bytes"
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultDialConcurrency bounds the connections being dialed at once.
const DefaultDialConcurrency = 16

// conns is the client's connection accounting: a bounded number of
// concurrent dials, so that a run that fell behind (every late arrival
// wanting a connection at once) waits for a returned or a newly dialed
// connection instead of starting a dial storm, and the counts a run
// reports.
type conns struct {
	d        *net.Dialer
	slots    chan struct{}
	dials    atomic.Int64
	inFlight atomic.Int64
	peak     atomic.Int64
}

func newConns(cfg Config) *conns {
	return &conns{d: &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second},
		slots: make(chan struct{}, cfg.DialConcurrency)}
}

// dial is the transport's DialContext.
func (c *conns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.slots }()
	c.dials.Add(1)
	return c.d.DialContext(ctx, network, addr)
}

func (c *conns) enter() {
	n := c.inFlight.Add(1)
	for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
	}
}

func (c *conns) leave() { c.inFlight.Add(-1) }

// ConnStats says how the client used its connections.
type ConnStats struct {
	Dials        int64 // connections dialed, warm-up included
	PeakInFlight int64 // requests in flight at once, at most
	MaxConns     int   // the cap (Config.MaxConns): a request beyond it waits for a connection
}

// ConnStats returns the counts so far.
func (c *Client) ConnStats() ConnStats {
	return ConnStats{Dials: c.conns.dials.Load(), PeakInFlight: c.conns.peak.Load(), MaxConns: c.cfg.MaxConns}
}

// WarmConns is how many connections a load arriving at rate req/s needs
// open before it starts: about the requests in flight at once with 50 ms
// answers (rate × 50 ms), at least 4, at most 256.
func WarmConns(rate float64) int {
	return min(max(int(math.Ceil(rate*0.05)), 4), 256)
}

// Warm opens up to n connections before traffic (GET /v1/models on each,
// all held open until every one has its own connection), so the first
// arrivals of a run do not pay for dials. It returns how many requests
// succeeded; a target that refuses them is no error here (the run's own
// check decides whether the target is usable).
func (c *Client) Warm(ctx context.Context, n int) int {
	n = min(n, c.cfg.MaxConns)
	var wg, got sync.WaitGroup
	var ok atomic.Int64
	got.Add(n)
	release := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.warmOne(ctx, &got, release, &ok)
		}()
	}
	go func() { got.Wait(); close(release) }()
	wg.Wait()
	return int(ok.Load())
}

// warmOne holds its response open until every warm-up request has one,
// so each takes a connection of its own.
func (c *Client) warmOne(ctx context.Context, got *sync.WaitGroup, release <-chan struct{}, ok *atomic.Int64) {
	done := sync.OnceFunc(got.Done)
	defer done()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := c.newRequest(ctx, http.MethodGet, "/v1/models", bytes.NewReader(nil))
	if err != nil {
		return
	}
	c.header(req, nil, nil, false, false)
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	done()
	select {
	case <-release:
	case <-ctx.Done():
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 == 2 {
		ok.Add(1)
	}
}
