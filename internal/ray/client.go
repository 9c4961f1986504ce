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
	// "Bearer <token>" in AuthHeader; never recorded.
	Token string `yaml:"-" json:"-"`
	// AuthHeader is the header carrying Token: "Authorization" (default:
	// what Ray's token auth reads first) or "x-ray-authorization" (read by
	// Ray only when Authorization is absent: for a proxy in front of the
	// dashboard that takes Authorization for itself).
	AuthHeader string `yaml:"auth_header,omitempty" json:"auth_header,omitempty"`
	// ProxyAuth (RAY_PROXY_AUTHORIZATION) is sent verbatim as
	// Authorization, the proxy's own credential; it needs AuthHeader
	// x-ray-authorization, and a proxy that strips Authorization before
	// the dashboard (Ray reads Authorization first). Never recorded.
	ProxyAuth string `yaml:"-" json:"-"`
	// TargetKeyEnv, when set, names an environment variable that every
	// node of the cluster already holds the target's API key in (set where
	// `ray start` runs): sagebench then sends the key nowhere. Unset, the
	// key goes in the job's runtime_env env_vars (ray.TargetKeyEnv), which
	// the cluster keeps with the job's info, never in the package.
	TargetKeyEnv string `yaml:"target_key_env,omitempty" json:"target_key_env,omitempty"`
	// UploadTimeout bounds the working_dir package's PUT (default
	// 5 min); every other call has CallTimeout.
	UploadTimeout time.Duration `yaml:"upload_timeout,omitempty" json:"upload_timeout,omitempty"`
}

// MaxPackageBytes is the largest body Ray's dashboard accepts
// (DASHBOARD_CLIENT_MAX_SIZE, 100 MiB): a larger working_dir package is
// refused before its upload.
const MaxPackageBytes = 100 << 20

// Validate checks that Address is an http(s) URL with a host.
func (c Config) Validate() error {
	if c.Address == "" {
		return errors.New("ray.address is empty: give --ray-address http://<head>:8265 or set RAY_ADDRESS")
	}
	u, err := url.Parse(c.Address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("ray.address %q: must be the dashboard's http(s) URL, e.g. http://127.0.0.1:8265", c.Address)
	}
	switch {
	case !strings.EqualFold(c.AuthHeader, HeaderAuth) && !strings.EqualFold(c.AuthHeader, HeaderAuthProxy) && c.AuthHeader != "":
		return fmt.Errorf("ray.auth_header %q: must be %s or %s", c.AuthHeader, HeaderAuth, HeaderAuthProxy)
	case c.ProxyAuth != "" && !strings.EqualFold(c.AuthHeader, HeaderAuthProxy):
		return fmt.Errorf("RAY_PROXY_AUTHORIZATION is set: it takes the Authorization header, so ray.auth_header must be %s", HeaderAuthProxy)
	case c.UploadTimeout < 0:
		return fmt.Errorf("ray.upload_timeout %s: must be ≥ 0 (0: 5m)", c.UploadTimeout)
	}
	return nil
}

// Headers that carry the bearer token on secured clusters (Ray ≥ 2.52):
// Ray's token auth reads Authorization, and x-ray-authorization only when
// Authorization is absent (a missing token answers 401, a wrong one 403).
// The token goes in one of them, Config.AuthHeader.
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
	base   string
	auth   http.Header
	http   *http.Client
	upload *http.Client // the package PUT: UploadTimeout
}

// NewClient returns a client for c (validated).
func NewClient(c Config) (*Client, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	tr := &http.Transport{DialContext: (&net.Dialer{Timeout: DialTimeout}).DialContext,
		ResponseHeaderTimeout: CallTimeout, MaxIdleConnsPerHost: 2}
	upload := c.UploadTimeout
	if upload == 0 {
		upload = 5 * time.Minute
	}
	utr := tr.Clone()
	utr.ResponseHeaderTimeout = upload
	return &Client{base: strings.TrimRight(c.Address, "/"), auth: authHeader(c),
		http: &http.Client{Transport: tr, Timeout: CallTimeout}, upload: &http.Client{Transport: utr, Timeout: upload}}, nil
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

// authHeader holds the token's header and the proxy's credential (none
// without them).
func authHeader(c Config) http.Header {
	h := http.Header{}
	name := HeaderAuth
	if strings.EqualFold(c.AuthHeader, HeaderAuthProxy) {
		name = HeaderAuthProxy
	}
	if c.Token != "" {
		h.Set(name, "Bearer "+c.Token)
	}
	if c.ProxyAuth != "" {
		h.Set(HeaderAuth, c.ProxyAuth)
	}
	return h
}

func (c *Client) authHeader() http.Header { return c.auth.Clone() }

// AuthHeader returns the headers the client authenticates with (secret:
// never log them).
func (c *Client) AuthHeader() http.Header { return c.auth.Clone() }

// do sends one request; out (may be nil) receives the decoded 2xx body.
func (c *Client) do(ctx context.Context, method, path, ctype string, body []byte, out any) error {
	return c.doWith(ctx, c.http, method, path, ctype, body, out)
}

func (c *Client) doWith(ctx context.Context, hc *http.Client, method, path, ctype string, body []byte, out any) error {
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
	resp, err := hc.Do(req)
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
