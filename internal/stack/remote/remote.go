package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/redact"
	"github.com/sagebench/sagebench/internal/stack/engine"
)

// Config points at one OpenAI-compatible engine.
type Config struct {
	ID     string
	URL    string // base URL, e.g. http://127.0.0.1:9001 (a trailing /v1 is accepted)
	Model  string // the model name the server expects
	Slots  int    // concurrency the gateway may use (default 64)
	APIKey string // sent as a bearer token when set; never logged
	// Client overrides the HTTP client (default: a pooled client without an
	// overall timeout, since streams are long; contexts bound each call).
	Client *http.Client
}

func (c Config) validate() (string, error) {
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSuffix(c.URL, "/"), "/v1"))
	switch {
	case c.ID == "":
		return "", errors.New("remote engine: id required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return "", fmt.Errorf("remote engine %s: url %q: want http(s)://host:port", c.ID, redact.URL(c.URL))
	case c.Model == "":
		return "", fmt.Errorf("remote engine %s: model required", c.ID)
	case c.Slots < 0:
		return "", fmt.Errorf("remote engine %s: slots %d must be ≥ 0", c.ID, c.Slots)
	}
	return u.String(), nil
}

// base is what LLM and Embedder share.
type base struct {
	cfg      Config
	url      string
	client   *http.Client
	redactor *redact.Redactor // for the engine's error messages
	running  atomic.Int64
}

func newBase(cfg Config) (*base, error) {
	u, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	if cfg.Slots == 0 {
		cfg.Slots = 64
	}
	c := cfg.Client
	if c == nil {
		c = &http.Client{Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        4 * cfg.Slots,
			MaxIdleConnsPerHost: 4 * cfg.Slots,
			IdleConnTimeout:     90 * time.Second,
			ReadBufferSize:      64 << 10, // an embeddings answer in one read
		}, CheckRedirect: noRedirect}
	}
	return &base{cfg: cfg, url: u, client: c, redactor: redact.New(cfg.APIKey)}, nil
}

// noRedirect keeps the API key from following a redirect elsewhere: the
// 3xx is the answer, an error.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func (b *base) ID() string    { return b.cfg.ID }
func (b *base) Model() string { return b.cfg.Model }

// Load counts the requests this client has in flight; the server's own
// queue is not visible over the OpenAI API.
func (b *base) Load() engine.Load {
	return engine.Load{Running: int(b.running.Load()), Slots: b.cfg.Slots}
}

// Health asks GET /health for a 200.
func (b *base) Health(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.url+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return b.transportErr(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("engine %s: /health answered %s", b.cfg.ID, resp.Status)
	}
	return nil
}

// post sends a JSON body and returns the response if it is a 200.
func (b *base) post(ctx context.Context, path string, body any, stream bool) (*http.Response, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url+path, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if b.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+b.cfg.APIKey)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, b.transportErr(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, b.statusErr(resp)
	}
	return resp, nil
}

// transportErr maps a failed exchange: the caller's context ending stays
// as it is; anything else means the engine is gone (engine.ErrClosed).
func (b *base) transportErr(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is in the id already
	}
	return fmt.Errorf("%w: engine %s: %v", engine.ErrClosed, b.cfg.ID, err)
}

func (b *base) statusErr(resp *http.Response) error {
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	text := strings.TrimSpace(string(msg))
	if json.Unmarshal(msg, &e) == nil && e.Error.Message != "" {
		text = e.Error.Message
	}
	text = b.redactor.String(strings.ToValidUTF8(text, "?"))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		return fmt.Errorf("%w: engine %s: %s: %s", engine.ErrOverloaded, b.cfg.ID, resp.Status, text)
	case resp.StatusCode == http.StatusBadRequest && contextLength.MatchString(text):
		// vLLM, TGI, llama.cpp: the prompt can never fit this engine.
		return fmt.Errorf("%w: engine %s: %s: %s", engine.ErrTooLarge, b.cfg.ID, resp.Status, text)
	}
	return fmt.Errorf("engine %s: %s: %s", b.cfg.ID, resp.Status, text)
}

// contextLength matches the servers' "prompt too long" 400 messages.
var contextLength = regexp.MustCompile(`(?i)context length|context window|maximum context|too many tokens|exceeds? the (model's )?(maximum|max)`)
