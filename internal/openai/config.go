package openai

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"github.com/sagebench/sagebench/internal/redact"
)

// Defaults of a zero Config.
const (
	DefaultTimeout          = 120 * time.Second
	DefaultConnectTimeout   = 5 * time.Second
	DefaultMaxConns         = 512
	DefaultMaxResponseBytes = 64 << 20
	DefaultMaxBytesInFlight = 64 << 20
)

// Config configures a Client. Zero values take the defaults above; only
// BaseURL is required.
type Config struct {
	BaseURL   string `yaml:"base_url" json:"base_url"`       // e.g. http://127.0.0.1:8080 (a trailing /v1 is accepted)
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env"` // name of the env var holding the API key (sent as Bearer); the key itself is never logged or recorded

	Timeout          time.Duration `yaml:"timeout" json:"timeout"`                         // whole request including the streamed body; 0 → DefaultTimeout
	ConnectTimeout   time.Duration `yaml:"connect_timeout" json:"connect_timeout"`         // TCP connect (+ TLS handshake); 0 → DefaultConnectTimeout
	FirstByteTimeout time.Duration `yaml:"first_byte_timeout" json:"first_byte_timeout"`   // request written → response headers; 0 → bounded by Timeout only
	MaxConns         int           `yaml:"max_conns" json:"max_conns"`                     // connections to the target at most (size it to the peak in-flight load; more requests wait for one); 0 → DefaultMaxConns
	MaxResponseBytes int64         `yaml:"max_response_bytes" json:"max_response_bytes"`   // 0 → DefaultMaxResponseBytes
	MaxBytesInFlight int64         `yaml:"max_bytes_in_flight" json:"max_bytes_in_flight"` // response bytes held by all requests in flight together (bodies being read, SSE line buffers beyond their first 32 KiB); past it a request fails too_large; 0 → DefaultMaxBytesInFlight
	MaxLineBytes     int           `yaml:"max_line_bytes" json:"max_line_bytes"`           // longest SSE line; 0 → DefaultMaxLine
	DialConcurrency  int           `yaml:"dial_concurrency" json:"dial_concurrency"`       // connections dialed at once; 0 → DefaultDialConcurrency
	// Retry is the client's retry policy; the zero value sends every
	// request exactly once.
	Retry RetryPolicy `yaml:"retry" json:"retry,omitzero"`
	// Secrets are further values (the admin token) the client masks, like
	// the API key, in every target-originated string it keeps.
	Secrets []string `yaml:"-" json:"-"`
}

// Bounds of what the client keeps of a response besides its body.
const (
	// MaxResponseHeaderBytes bounds a response's header block; past it
	// the request fails too_large (net/http's default is 10 MB).
	MaxResponseHeaderBytes = 1 << 20
	// MaxEngineBytes bounds the X-Engine-Id kept in Result.Engine (a
	// longer one is cut with a marker, see redact.Clip).
	MaxEngineBytes = 256
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate reports the first problem of c, naming the field and the fix.
func (c Config) Validate() error {
	if c.BaseURL == "" {
		return errors.New("target.base_url is missing; set it to the target's URL, e.g. http://127.0.0.1:8080")
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("target.base_url %q is not an http(s) URL with a host; use e.g. http://127.0.0.1:8080", redact.URL(c.BaseURL))
	}
	if u.User != nil {
		return errors.New("target.base_url must not carry credentials; put the key in the env var named by target.api_key_env")
	}
	if c.APIKeyEnv != "" && !envName.MatchString(c.APIKeyEnv) {
		return fmt.Errorf("target.api_key_env %q is not an environment variable name (it names the variable, it is not the key)", c.APIKeyEnv)
	}
	for name, d := range map[string]time.Duration{"timeout": c.Timeout, "connect_timeout": c.ConnectTimeout, "first_byte_timeout": c.FirstByteTimeout} {
		if d < 0 {
			return fmt.Errorf("target.%s must be >= 0 (0 = default)", name)
		}
	}
	if c.MaxConns < 0 || c.MaxResponseBytes < 0 || c.MaxLineBytes < 0 || c.DialConcurrency < 0 || c.MaxBytesInFlight < 0 {
		return errors.New("target.max_conns, max_response_bytes, max_bytes_in_flight, max_line_bytes and dial_concurrency must be >= 0 (0 = default)")
	}
	return c.Retry.Validate()
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.Timeout, DefaultTimeout)
	def(&c.ConnectTimeout, DefaultConnectTimeout)
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.MaxBytesInFlight == 0 {
		c.MaxBytesInFlight = DefaultMaxBytesInFlight
	}
	if c.MaxLineBytes == 0 {
		c.MaxLineBytes = DefaultMaxLine
	}
	if c.DialConcurrency == 0 {
		c.DialConcurrency = DefaultDialConcurrency
	}
	return c
}
