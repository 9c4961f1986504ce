package openai

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/sagebench/sagebench/internal/protocol"

	"github.com/sagebench/sagebench/internal/redact"
)

// Client talks to one OpenAI-compatible target. It is safe for concurrent
// use; all calls share one connection pool.
type Client struct {
	cfg      Config
	base     string // BaseURL without a trailing "/" or "/v1"
	key      string
	redactor *redact.Redactor // applied to every target-originated string of an error
	http     *http.Client
	conns    *conns
}

// Result is the outcome of one request, with its timing. All times are
// wall-clock readings taken by the client (monotonic inside the process):
//
//   - Start: the call began (before waiting for or dialing a connection).
//   - Sent: a connection was obtained and the request is about to be
//     written (httptrace GotConn); equals Start when no connection was
//     obtained. Sent − intended is the schedule lag a record reports.
//   - Wrote: the request was fully written (httptrace WroteRequest); zero
//     if the answer came before the request was fully written.
//   - FirstByte: the first byte of the response arrived.
//   - FirstToken: the first non-empty content delta was parsed (streamed
//     chats only; zero otherwise).
//   - Tokens: the time each non-empty content delta was parsed.
//   - End: the body was read to its end (or the request failed).
type Result struct {
	Start, Sent, Wrote, FirstByte, FirstToken, End time.Time
	Tokens                                         []time.Time

	Status  int
	Engine  string // X-Engine-Id
	Retries int    // X-Sagebench-Retries
	// Server is the target's own timing of the request
	// (protocol.HeaderServerTiming, a trailer on streams); ServerOK says
	// the target sent a usable one.
	Server   protocol.ServerTiming
	ServerOK bool

	PromptTokens, CompletionTokens int
	Text                           string

	Embeddings [][]float32
	Docs       []Doc

	Err      error
	ErrClass string // "" when ok, else one of ErrClasses
}

// OK reports whether the request succeeded.
func (r *Result) OK() bool { return r.Err == nil }

// NewClient validates cfg, reads the API key from the environment variable
// it names, and builds the connection pool.
func NewClient(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	c := &Client{cfg: cfg, base: strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1")}
	if cfg.APIKeyEnv != "" {
		c.key = os.Getenv(cfg.APIKeyEnv)
		if c.key == "" {
			return nil, fmt.Errorf("target.api_key_env names %s, but that environment variable is empty or unset; export it", cfg.APIKeyEnv)
		}
	}
	c.redactor = redact.New(c.key)
	c.conns = newConns(cfg)
	c.http = &http.Client{
		Transport: newTransport(cfg, c.conns),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // never carry the key elsewhere
		},
	}
	return c, nil
}

// newTransport keeps at most MaxConns connections to the target (a
// request beyond them waits for one, and its schedule lag shows it) and
// dials at most DialConcurrency at once.
func newTransport(cfg Config, cn *conns) *http.Transport {
	return &http.Transport{
		Proxy:                 nil, // a benchmark measures the target, not a proxy
		DialContext:           cn.dial,
		MaxConnsPerHost:       cfg.MaxConns,
		TLSHandshakeTimeout:   cfg.ConnectTimeout,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		MaxIdleConns:          cfg.MaxConns,
		MaxIdleConnsPerHost:   cfg.MaxConns,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: cfg.FirstByteTimeout,
		DisableCompression:    true,
		ReadBufferSize:        32 << 10,
		WriteBufferSize:       16 << 10,
	}
}

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// stamps collects httptrace times; the callbacks run on the transport's
// goroutines (WroteRequest may even fire after the response arrived), so
// they are guarded.
type stamps struct {
	mu                       sync.Mutex
	sent, wroteAt, firstByte time.Time
}

func (s *stamps) trace() *httptrace.ClientTrace {
	set := func(p *time.Time) {
		now := time.Now()
		s.mu.Lock()
		*p = now
		s.mu.Unlock()
	}
	return &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { set(&s.sent) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { set(&s.wroteAt) },
		GotFirstResponseByte: func() { set(&s.firstByte) },
	}
}

func (s *stamps) connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.sent.IsZero()
}

func (s *stamps) copyTo(res *Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sent.IsZero() {
		res.Sent = s.sent
	}
	res.Wrote, res.FirstByte = s.wroteAt, s.firstByte
}

// call is one HTTP exchange in flight.
type call struct {
	ctx    context.Context
	cancel context.CancelFunc
	resp   *http.Response
	body   io.Reader // size-limited
}

// send performs method path with body and fills the timing and header
// fields of res. On failure it sets res.Err and returns nil.
func (c *Client) send(ctx context.Context, method, path string, body []byte, hdr http.Header, stream bool, res *Result) *call {
	res.Start = time.Now()
	res.Sent = res.Start
	cctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errWholeTimeout)
	st := &stamps{}
	defer st.copyTo(res)
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(cctx, st.trace()), method, c.base+path, bytes.NewReader(body))
	if err != nil {
		cancel()
		c.fail(res, ClassMalformed, fmt.Errorf("building request: %w", err))
		return nil
	}
	c.header(req, hdr, body != nil, stream)
	c.conns.enter()
	resp, err := c.http.Do(req)
	if err != nil {
		c.conns.leave()
		// Refused or unreachable is connect; once a connection was
		// obtained, a close or reset before the answer is reset.
		phase := "connect"
		if st.connected() {
			phase = "reset"
		}
		class := classify(cctx, err, phase)
		cancel()
		c.fail(res, class, fmt.Errorf("%s %s: %w", method, path, unwrapURL(err)))
		return nil
	}
	res.Status = resp.StatusCode
	res.Engine = resp.Header.Get(protocol.HeaderEngine)
	res.Retries, _ = strconv.Atoi(resp.Header.Get(protocol.HeaderRetries))
	cl := &call{ctx: cctx, cancel: cancel, resp: resp, body: &limitedBody{r: resp.Body, n: c.cfg.MaxResponseBytes}}
	if resp.StatusCode/100 != 2 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		c.done(cl, res)
		c.fail(res, statusClass(resp.StatusCode), &StatusError{Status: resp.StatusCode, Body: c.excerpt(snippet, 200)})
		return nil
	}
	return cl
}

func (c *Client) header(req *http.Request, hdr http.Header, hasBody, stream bool) {
	for k, v := range hdr {
		req.Header[k] = v
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
}

// done drains a little of the body (so that the connection can be
// reused), closes it and releases the call's context.
func (c *Client) done(cl *call, res *Result) {
	_, _ = io.Copy(io.Discard, io.LimitReader(cl.resp.Body, 4<<10))
	cl.resp.Body.Close()
	cl.cancel()
	c.conns.leave()
	if res.End.IsZero() {
		res.End = time.Now()
	}
	res.Server, res.ServerOK = serverTiming(cl.resp)
}

// fail records an error, with the API key scrubbed from its text.
func (c *Client) fail(res *Result, class string, err error) {
	if res.End.IsZero() {
		res.End = time.Now()
	}
	res.ErrClass = class
	res.Err = c.redact(err)
}

// readErr classifies an error met while reading a 2xx body.
func (c *Client) readErr(cl *call, res *Result, err error) {
	class := classify(cl.ctx, err, "read")
	c.fail(res, class, fmt.Errorf("reading response: %w", err))
}

// redact applies the redaction rule (the API key and credential-like
// fields masked) to err's text; see redact.Redactor.Error.
func (c *Client) redact(err error) error { return c.redactor.Error(err) }

// unwrapURL drops the *url.Error wrapper (whose text repeats the URL).
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// excerpt makes a short printable one-line excerpt (at most n bytes) of
// a target's body, redacted before and after the cut (a secret straddling
// the cut leaves no prefix behind).
func (c *Client) excerpt(b []byte, n int) string {
	s := strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, string(b[:min(len(b), n+4<<10)]))
	s = c.redactor.String(strings.Join(strings.Fields(s), " "))
	if len(s) > n {
		s = c.redactor.String(strings.ToValidUTF8(s[:n], "")) + "…"
	}
	return s
}

// limitedBody fails with errTooLarge once more than n bytes were read.
type limitedBody struct {
	r io.Reader
	n int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, errTooLarge
	}
	return n, err
}

// Models lists the model ids the target serves (GET /v1/models).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	var res Result
	cl := c.send(ctx, http.MethodGet, "/v1/models", nil, nil, false, &res)
	if cl == nil {
		return nil, res.Err
	}
	defer c.done(cl, &res)
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(cl.body).Decode(&out); err != nil {
		return nil, c.redact(fmt.Errorf("GET /v1/models: decoding the model list: %w", err))
	}
	ids := make([]string, len(out.Data))
	for i, m := range out.Data {
		ids[i] = m.ID
	}
	return ids, nil
}
