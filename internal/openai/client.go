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
	"sync/atomic"
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
	// rt is the transport every request goes through directly (not an
	// http.Client: redirects are never followed anyway, and Client.Do
	// would copy every request's header for them).
	rt    http.RoundTripper   // an *http.Transport (tests substitute their own)
	urls  map[string]*url.URL // parsed once per API path; read-only, shared by the requests
	hdrs  fixedHeaders
	conns *conns
	// engines caches the kept form of the X-Engine-Id values seen (a
	// target has a handful), so that a header is redacted once.
	engines sync.Map
	nEngine atomic.Int64
	held    atomic.Int64 // bytes of response bodies held by calls in flight (see call.charge)
	retry   *retrier     // nil: every request is sent once
	calls   calls        // per-request state recycled (call.go)
}

// Result is the outcome of one request, with its timing. All times are
// wall-clock readings taken by the client (monotonic inside the process):
//
//   - Start: the call began (before waiting for or dialing a connection).
//   - Sent: a connection was obtained and the request is about to be
//     written (httptrace GotConn); equals Start when no connection was
//     obtained. Sent − intended is the schedule lag a record reports. A
//     request the transport replayed (the target closed the connection
//     before answering) keeps its first Sent: the harness sent it on
//     time, the wait for the replay is the target's.
//   - FirstByte: the first byte of the response arrived.
//   - FirstToken: the first non-empty delta of any kind (answer or
//     reasoning) was parsed (streamed chats only; zero otherwise).
//   - FirstAnswerToken: the first non-empty content (answer) delta was
//     parsed; later than FirstToken when a reasoning model thinks first.
//   - Tokens: the time each non-empty delta (answer or reasoning) was
//     parsed, at most max_tokens plus a margin: past that the last entry
//     is the latest token and TokensDropped counts the ones left out.
//   - End: the body was read to its end (or the request failed).
type Result struct {
	Start, Sent, FirstByte, FirstToken, FirstAnswerToken, End time.Time

	Tokens []time.Time
	// TokenCount is the number of deltas timed (answer and reasoning),
	// TokensDropped those of them whose time is not in Tokens.
	TokenCount, TokensDropped int

	Status  int
	Engine  string // X-Engine-Id
	Retries int    // X-Sagebench-Retries

	// Attempts is the number of times the client sent the request under
	// its retry policy (1 without one, 0 when it was never sent);
	// Attempt is the one whose outcome this Result reports. Start and
	// Sent are the first attempt's, End the final one's: End − Sent is
	// what the user waited. Tries holds every attempt when there was more
	// than one. Replays counts net/http's own replays of a request none
	// of whose bytes had been written (never one the target could see).
	Attempt, Attempts int
	Tries             []Try
	Replays           int
	// Server is the target's own timing of the request
	// (protocol.HeaderServerTiming, a trailer on streams); ServerOK says
	// the target sent a usable one.
	Server   protocol.ServerTiming
	ServerOK bool
	// QueueWait is the gateway's X-Sagebench-Queue-Us; QueueKnown says
	// whether the target sent it.
	QueueWait  time.Duration
	QueueKnown bool

	PromptTokens, CompletionTokens int
	// Text is the answer, kept only when ChatRequest.KeepText asks for it.
	Text string
	// Note says something a reader of the record should know about an ok
	// result (e.g. NoteNoDone).
	Note string

	Embeddings [][]float32
	Docs       []Doc

	Err      error
	ErrClass string // "" when ok, else one of ErrClasses
}

// OK reports whether the request succeeded.
func (r *Result) OK() bool { return r.Err == nil }

// addNote appends a note to Result.Note.
func (r *Result) addNote(n string) {
	if r.Note != "" {
		r.Note += "; "
	}
	r.Note += n
}

// TimePerToken is the mean time between the tokens actually timed:
// (last − first) ÷ (TokenCount − 1); 0 with fewer than two. Usage counts
// (which may include tokens never streamed) play no part.
func (r *Result) TimePerToken() time.Duration {
	if r.TokenCount < 2 || len(r.Tokens) == 0 {
		return 0
	}
	return r.Tokens[len(r.Tokens)-1].Sub(r.FirstToken) / time.Duration(r.TokenCount-1)
}

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
	c.redactor = redact.New(append([]string{c.key}, cfg.Secrets...)...)
	c.conns = newConns(cfg)
	c.rt = newTransport(cfg, c.conns)
	c.urls = map[string]*url.URL{}
	for _, p := range apiPaths {
		u, err := url.Parse(c.base + p)
		if err != nil {
			return nil, fmt.Errorf("target URL %q: %w", c.redactor.String(cfg.BaseURL), err)
		}
		c.urls[p] = u
	}
	c.hdrs = newFixedHeaders(c.key)
	if cfg.Retry.Enabled() {
		c.retry = newRetrier(cfg.Retry)
	}
	return c, nil
}

// apiPaths are the paths the client calls; their URLs are parsed once.
var apiPaths = [...]string{"/v1/models", "/v1/embeddings", "/v1/chat/completions", "/v1/retrieve"}

// fixedHeaders are the header values every request shares (never
// modified: the transport only reads a request's header).
type fixedHeaders struct {
	json, sse, auth []string
}

func newFixedHeaders(key string) fixedHeaders {
	h := fixedHeaders{json: []string{"application/json"}, sse: []string{"text/event-stream"}}
	if key != "" {
		h.auth = []string{"Bearer " + key}
	}
	return h
}

// newTransport keeps at most MaxConns connections to the target (a
// request beyond them waits for one, and its schedule lag shows it) and
// dials at most DialConcurrency at once.
func newTransport(cfg Config, cn *conns) *http.Transport {
	return &http.Transport{
		Proxy:                  nil, // a benchmark measures the target, not a proxy
		DialContext:            cn.dial,
		MaxConnsPerHost:        cfg.MaxConns,
		TLSHandshakeTimeout:    cfg.ConnectTimeout,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		MaxIdleConns:           cfg.MaxConns,
		MaxIdleConnsPerHost:    cfg.MaxConns,
		IdleConnTimeout:        90 * time.Second,
		ResponseHeaderTimeout:  cfg.FirstByteTimeout,
		DisableCompression:     true,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
		// The transport's default 4 KiB buffers: a larger read or write
		// (a stream's SSE reader asks 32 KiB at a time, a long prompt
		// body) bypasses them anyway, while every connection kept holds
		// its pair: 48 KiB × 256 warmed connections was 12 MB of heap,
		// whose GC goal then doubled it in pages faulted in.
	}
}

// Close releases idle connections.
func (c *Client) Close() {
	if t, ok := c.rt.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// send performs method path with body and fills the timing and header
// fields of res. On failure it sets res.Err and returns nil.
// cl is a call from c.calls, ready for the request.
func (c *Client) send(ctx context.Context, cl *call, method, path string, body []byte, hdr http.Header, stream bool, res *Result) *call {
	res.Start = time.Now()
	res.Sent = res.Start
	cctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errWholeTimeout)
	cl.rd.Reset(body)
	// A caller's own trace is composed (in place) into a copy of the
	// call's hooks, never into the pooled ones: an earlier request's dial
	// that outlived it (net/http dials on the request's context values)
	// may still read those. Such a call is never recycled (calls.put).
	tr := &cl.st.trace
	if cl.traced = httptrace.ContextClientTrace(ctx) != nil; cl.traced {
		own := cl.st.trace
		tr = &own
	}
	req, err := c.newRequest(httptrace.WithClientTrace(cctx, tr), method, path, &cl.rd)
	if err != nil {
		cancel()
		c.fail(res, ClassMalformed, fmt.Errorf("building request: %w", err))
		return nil
	}
	cl.hdr = c.header(req, cl.hdr, hdr, body != nil, stream)
	c.conns.enter()
	resp, err := c.rt.RoundTrip(req)
	cl.st.copyTo(res)
	if err != nil {
		c.conns.leave()
		// Refused or unreachable is connect; once a connection was
		// obtained, a close before the request was written whole is
		// reset, after it dropped_after_send (the target may have read
		// and executed it).
		class := classify(cctx, err, cl.st.phase())
		cancel()
		c.fail(res, class, fmt.Errorf("%s %s: %w", method, path, unwrapURL(err)))
		return nil // cl is not recycled: the transport may hold it still
	}
	res.Status = resp.StatusCode
	res.Engine = c.engine(resp.Header.Get(protocol.HeaderEngine))
	if v := resp.Header.Get(protocol.HeaderRetries); v != "" {
		res.Retries, _ = strconv.Atoi(v)
	}
	if v := resp.Header.Get(protocol.HeaderQueueWait); v != "" {
		res.QueueWait, res.QueueKnown = protocol.ParseQueueWait(v)
	}
	cl.ctx, cl.cancel, cl.resp = cctx, cancel, resp
	cl.lim = limitedBody{r: resp.Body, n: c.cfg.MaxResponseBytes}
	cl.budget, cl.limit = &c.held, c.cfg.MaxBytesInFlight
	cl.body = &cl.lim
	if resp.StatusCode/100 != 2 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		c.done(cl, res)
		c.fail(res, statusClass(resp.StatusCode), &StatusError{Status: resp.StatusCode, Body: c.excerpt(snippet, 200)})
		return nil
	}
	return cl
}

// maxEngines bounds the cache of engine ids (a target inventing a new id
// per answer is redacted every time instead).
const maxEngines = 1024

// engine is the kept form of an X-Engine-Id: redacted and at most
// MaxEngineBytes.
func (c *Client) engine(h string) string {
	if h == "" {
		return ""
	}
	if v, ok := c.engines.Load(h); ok {
		return v.(string)
	}
	clean := c.redactor.Field(h, MaxEngineBytes)
	if len(h) <= MaxEngineBytes && c.nEngine.Add(1) <= maxEngines {
		c.engines.Store(h, clean)
	}
	return clean
}

// newRequest builds a request for one of the client's paths on its
// pre-parsed URL (any other path is parsed here). The body is a
// bytes.Reader, so the request has GetBody and can be replayed.
func (c *Client) newRequest(ctx context.Context, method, path string, body *bytes.Reader) (*http.Request, error) {
	u := c.urls[path]
	if u == nil {
		return http.NewRequestWithContext(ctx, method, c.base+path, body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "", body)
	if err != nil {
		return nil, err
	}
	req.URL, req.Host = u, strings.TrimSuffix(u.Host, ":") // as NewRequest sets them
	return req, nil
}

// header sets req's header: hdr's keys and the client's fixed ones, in
// h (a recycled call's map, emptied first) or a new map when h is nil or
// large; it returns the map.
func (c *Client) header(req *http.Request, h, hdr http.Header, hasBody, stream bool) http.Header {
	n := len(hdr) + 3 // Content-Type, Accept, X-Sagebench-Attempt: ≤ 8 keys fit a map's first group
	if c.hdrs.auth != nil {
		n++
	}
	if h == nil || len(h) > 16 {
		h = make(http.Header, n)
	} else {
		clear(h)
	}
	for k, v := range hdr {
		h[k] = v
	}
	if hasBody {
		h["Content-Type"] = c.hdrs.json
	}
	if stream {
		h["Accept"] = c.hdrs.sse
	} else {
		h["Accept"] = c.hdrs.json
	}
	if c.hdrs.auth != nil {
		h["Authorization"] = c.hdrs.auth
	}
	req.Header = h
	return h
}

// done drains a little of the body (so that the connection can be
// reused), closes it and releases the call's context.
func (c *Client) done(cl *call, res *Result) {
	if !cl.eof {
		_, _ = io.Copy(io.Discard, io.LimitReader(cl.resp.Body, 4<<10))
	}
	cl.resp.Body.Close()
	cl.cancel()
	cl.release()
	c.conns.leave()
	if res.End.IsZero() {
		res.End = time.Now()
	}
	res.Server, res.ServerOK = serverTiming(cl.resp)
	c.calls.put(cl) // nothing of cl may be used after this
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

// Models lists the model ids the target serves (GET /v1/models).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	var res Result
	cl := c.send(ctx, c.calls.get(), http.MethodGet, "/v1/models", nil, nil, false, &res)
	if cl == nil {
		return nil, res.Err
	}
	defer c.done(cl, &res)
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	data, err := cl.readAll()
	if err == nil {
		err = json.Unmarshal(data, &out)
	}
	if err != nil {
		return nil, c.redact(fmt.Errorf("GET /v1/models: decoding the model list: %w", err))
	}
	ids := make([]string, len(out.Data))
	for i, m := range out.Data {
		ids[i] = m.ID
	}
	return ids, nil
}
