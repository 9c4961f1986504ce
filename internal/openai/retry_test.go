package openai

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const completionJSON = `{"choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`

// dropFunc decides, for the n-th request (1-based) read on a connection,
// with its X-Sagebench-Attempt header, whether the target reads it and
// hangs up without an answer.
type dropFunc func(nOnConn int, attempt string) bool

// dropper is a keep-alive target that reads every request whole and then
// answers it or, when drop says so, closes the connection unanswered. It
// counts the POSTs it read.
func dropper(t *testing.T, drop dropFunc) (url string, posts *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	posts = &atomic.Int64{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); serveDropping(conn, posts, drop) }()
		}
	}()
	return "http://" + ln.Addr().String(), posts
}

func serveDropping(conn net.Conn, posts *atomic.Int64, drop dropFunc) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	for n := 1; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		posts.Add(1)
		if drop(n, req.Header.Get(HeaderAttempt)) {
			return // read whole, never answered
		}
		resp := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
			strconv.Itoa(len(completionJSON)) + "\r\n\r\n" + completionJSON
		if _, err := io.WriteString(conn, resp); err != nil {
			return
		}
	}
}

// everySecondOnConn drops the second request of each connection.
func everySecondOnConn(n int, _ string) bool { return n == 2 }

func chatN(t *testing.T, c *Client, n int) (results []Result) {
	t.Helper()
	req := ChatRequest{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}}
	for range n {
		results = append(results, c.Chat(context.Background(), req))
	}
	return results
}

// TestSentOnce: a target that reads every second request of a kept-alive
// connection and hangs up receives exactly one POST per request, and
// every drop is recorded as dropped_after_send (never replayed, never ok).
func TestSentOnce(t *testing.T) {
	url, posts := dropper(t, everySecondOnConn)
	c, err := NewClient(Config{BaseURL: url, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ok, dropped := 0, 0
	for i, res := range chatN(t, c, 20) {
		switch {
		case res.Err == nil:
			ok++
		case res.ErrClass == ClassDropped:
			dropped++
		default:
			t.Errorf("request %d: class %q (%v), want ok or %s", i, res.ErrClass, res.Err, ClassDropped)
		}
		if res.Attempts != 1 || res.Attempt != 1 || len(res.Tries) != 0 {
			t.Errorf("request %d: attempt %d of %d (%d tries), want 1 of 1", i, res.Attempt, res.Attempts, len(res.Tries))
		}
	}
	if got := posts.Load(); got != 20 {
		t.Errorf("target read %d POSTs for 20 requests, want 20 (sent once)", got)
	}
	if ok != 10 || dropped != 10 {
		t.Errorf("%d ok, %d dropped_after_send; want 10 and 10", ok, dropped)
	}
}

// amplification is attempts ÷ requests over results.
func amplification(results []Result) (float64, int) {
	attempts := 0
	for _, r := range results {
		attempts += r.Attempts
	}
	return float64(attempts) / float64(len(results)), attempts
}

func retryClient(t *testing.T, url string, p RetryPolicy) *Client {
	t.Helper()
	c, err := NewClient(Config{BaseURL: url, MaxConns: 1, Retry: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestRetryPolicy: with max_attempts 3 the same target gives 20
// successes. Each retry lands first on a fresh connection, so every
// request after the first is dropped once: 39 attempts, all POSTs the
// target read, amplification 1.95, every attempt kept.
func TestRetryPolicy(t *testing.T) {
	url, posts := dropper(t, everySecondOnConn)
	c := retryClient(t, url, RetryPolicy{MaxAttempts: 3, Backoff: Backoff{Base: time.Millisecond}})
	results := chatN(t, c, 20)
	for i, res := range results {
		if res.Err != nil {
			t.Fatalf("request %d: %v (%s) after %d attempts", i, res.Err, res.ErrClass, res.Attempts)
		}
		if res.Attempts > 1 {
			if len(res.Tries) != res.Attempts || res.Tries[0].ErrClass != ClassDropped || res.Tries[1].ErrClass != "" {
				t.Errorf("request %d: tries %+v, want a dropped attempt then an ok one", i, res.Tries)
			}
			if res.Attempt != res.Attempts || !res.Sent.Equal(res.Tries[0].Sent) {
				t.Errorf("request %d: attempt %d of %d, sent %v (first try %v): the answer is the last attempt's, the send the first's",
					i, res.Attempt, res.Attempts, res.Sent, res.Tries[0].Sent)
			}
		}
	}
	amp, attempts := amplification(results)
	if attempts != 39 || posts.Load() != 39 || amp != 1.95 {
		t.Errorf("%d attempts, %d POSTs read, amplification %g; want 39, 39, 1.95", attempts, posts.Load(), amp)
	}
}

// TestRetryAmplification: a target that drops the first attempt of
// every second request (a retry it always answers) costs each dropped
// request one retry: 20 successes from 30 attempts, amplification 1.5.
func TestRetryAmplification(t *testing.T) {
	var firsts atomic.Int64
	url, posts := dropper(t, func(_ int, attempt string) bool {
		return attempt == "1" && firsts.Add(1)%2 == 0
	})
	c := retryClient(t, url, RetryPolicy{MaxAttempts: 3, Backoff: Backoff{Base: time.Millisecond, Jitter: 0.5}})
	results := chatN(t, c, 20)
	for i, res := range results {
		if res.Err != nil {
			t.Fatalf("request %d: %v (%s)", i, res.Err, res.ErrClass)
		}
	}
	if amp, attempts := amplification(results); attempts != 30 || amp != 1.5 || posts.Load() != 30 {
		t.Errorf("%d attempts, %d POSTs, amplification %g; want 30, 30, 1.5", attempts, posts.Load(), amp)
	}
}

// TestRetryBudget: a budget of 0.25 retries per request lets at most a
// quarter of the requests retry; the others keep their failure, noted.
func TestRetryBudget(t *testing.T) {
	url, _ := dropper(t, func(int, string) bool { return true })
	c := retryClient(t, url, RetryPolicy{MaxAttempts: 2, Budget: 0.25, Backoff: Backoff{Base: time.Millisecond}})
	results := chatN(t, c, 20)
	_, attempts := amplification(results)
	if attempts != 25 {
		t.Errorf("%d attempts for 20 requests under a 0.25 budget, want 25", attempts)
	}
	for _, r := range results {
		if r.Err == nil || r.ErrClass != ClassDropped {
			t.Fatalf("class %q, want every request dropped", r.ErrClass)
		}
	}
}

// TestRetryNotOn: a class left out of retry.on is not retried.
func TestRetryNotOn(t *testing.T) {
	url, posts := dropper(t, everySecondOnConn)
	c := retryClient(t, url, RetryPolicy{MaxAttempts: 3, On: []string{"connect", "5xx"}})
	chatN(t, c, 4)
	if posts.Load() != 4 {
		t.Errorf("%d POSTs for 4 requests, want 4: dropped_after_send is not in retry.on", posts.Load())
	}
}

// TestHedge: a hedge sent after hedge_after wins over a first attempt
// the target never answers; both are kept, the loser superseded.
func TestHedge(t *testing.T) {
	url, posts := dropper(t, func(_ int, attempt string) bool {
		if attempt == "1" {
			time.Sleep(2 * time.Second) // unanswered until the hedge won
			return true
		}
		return false
	})
	c, err := NewClient(Config{BaseURL: url, Retry: RetryPolicy{HedgeAfter: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res := chatN(t, c, 1)[0]
	if res.Err != nil || res.Attempt != 2 || res.Attempts != 2 || len(res.Tries) != 2 || !res.Tries[0].Superseded || !res.Tries[1].Hedge {
		t.Fatalf("err %v, attempt %d of %d, tries %+v; want the hedge (2) to win and the first superseded", res.Err, res.Attempt, res.Attempts, res.Tries)
	}
	if posts.Load() < 1 {
		t.Error("no POST read")
	}
}

func TestRetryPolicyValidate(t *testing.T) {
	for name, p := range map[string]RetryPolicy{
		"attempts": {MaxAttempts: 11},
		"jitter":   {Backoff: Backoff{Jitter: 2}},
		"budget":   {Budget: -1},
		"on":       {MaxAttempts: 2, On: []string{"4xx"}},
		"hedge":    {HedgeAfter: -1},
		"negative": {MaxAttempts: -1},
		"base":     {Backoff: Backoff{Base: -1}},
	} {
		t.Run(name, func(t *testing.T) {
			if err := (Config{BaseURL: "http://x", Retry: p}).Validate(); err == nil {
				t.Errorf("%+v accepted", p)
			}
		})
	}
}
