package ray

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
	"strings"
	"time"
)

// Config locates a cluster's Jobs API.
type Config struct {
	// Address is the dashboard's base URL, e.g. http://127.0.0.1:8265
	// (RAY_ADDRESS).
	Address string `yaml:"address,omitempty" json:"address,omitempty"`
	// Token is the cluster's auth token (RAY_AUTH_TOKEN), sent as
	// Authorization: Bearer (what Ray's token auth reads) and as
	// x-ray-authorization (its fallback when a proxy takes
	// Authorization); never recorded.
	Token string `yaml:"-" json:"-"`
}

// Validate checks that Address is an http(s) URL with a host.
func (c Config) Validate() error {
	if c.Address == "" {
		return errors.New("ray.address is empty: give --ray-address http://<head>:8265 or set RAY_ADDRESS")
	}
	u, err := url.Parse(c.Address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("ray.address %q: must be the dashboard's http(s) URL, e.g. http://127.0.0.1:8265", c.Address)
	}
	return nil
}

// Headers that carry the bearer token on secured clusters (Ray ≥ 2.52):
// Ray's token auth reads Authorization first; x-ray-authorization is the
// fallback for a proxy in front of the dashboard that uses Authorization
// for itself. Both are sent.
const (
	HeaderAuth      = "Authorization"
	HeaderAuthProxy = "x-ray-authorization"
)

// Timeouts of the client: connecting, and one API call.
const (
	DialTimeout = 3 * time.Second
	CallTimeout = 15 * time.Second
)

// Client calls one cluster's Jobs API.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient returns a client for c (validated).
func NewClient(c Config) (*Client, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	tr := &http.Transport{DialContext: (&net.Dialer{Timeout: DialTimeout}).DialContext,
		ResponseHeaderTimeout: CallTimeout, MaxIdleConnsPerHost: 2}
	return &Client{base: strings.TrimRight(c.Address, "/"), token: c.Token,
		http: &http.Client{Transport: tr, Timeout: CallTimeout}}, nil
}

// Address is the dashboard's base URL.
func (c *Client) Address() string { return c.base }

// APIError is a non-2xx answer of the Jobs API.
type APIError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("ray: %s %s: status %d: %s", e.Method, e.Path, e.Status, e.Body)
}

// IsStatus reports whether err is an APIError with the given status.
func IsStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}

// authHeader holds the token's headers (none without a token).
func (c *Client) authHeader() http.Header {
	h := http.Header{}
	if c.token != "" {
		h.Set(HeaderAuth, "Bearer "+c.token)
		h.Set(HeaderAuthProxy, "Bearer "+c.token)
	}
	return h
}

// do sends one request; out (may be nil) receives the decoded 2xx body.
func (c *Client) do(ctx context.Context, method, path, ctype string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("ray: %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range c.authHeader() {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("ray: dashboard at %s unreachable (%s %s): %w", c.base, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("ray: %s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &APIError{Method: method, Path: path, Status: resp.StatusCode, Body: clip(string(b), 300)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("ray: %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

func (c *Client) doJSON(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("ray: encoding %s %s: %w", method, path, err)
		}
	}
	return c.do(ctx, method, path, "application/json", body, out)
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Version is GET /api/version.
type Version struct {
	API        string `json:"version"`
	RayVersion string `json:"ray_version"`
	RayCommit  string `json:"ray_commit"`
}

// Version asks the cluster for its Jobs API and Ray versions; it is the
// reachability check before a run.
func (c *Client) Version(ctx context.Context) (Version, error) {
	var v Version
	err := c.doJSON(ctx, http.MethodGet, "/api/version", nil, &v)
	return v, err
}
