package target

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/redact"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Embedded is the value of Config.URL that selects the reference stack.
const Embedded = "embedded"

// Config says which target to use and how to reach it.
type Config struct {
	// URL is "embedded" (default) or an OpenAI-compatible base URL such as
	// http://127.0.0.1:8000 (with or without a trailing /v1).
	URL string `yaml:"url" json:"url"`
	// APIKeyEnv names the environment variable holding the API key sent as
	// a bearer token. The key itself is never recorded.
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// Timeout bounds one request, streamed body included (default 60s).
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// FirstByteTimeout bounds request written → response headers (0: Timeout only).
	FirstByteTimeout time.Duration `yaml:"first_byte_timeout,omitempty" json:"first_byte_timeout,omitempty"`
	// MaxConns is the connection pool size (0: the client's default).
	MaxConns int `yaml:"max_conns,omitempty" json:"max_conns,omitempty"`
	// MaxBytesInFlight bounds the response bytes all requests in flight
	// hold together; past it a request fails too_large instead of growing
	// the harness (0: openai.DefaultMaxBytesInFlight, 64 MiB).
	MaxBytesInFlight int64 `yaml:"max_bytes_in_flight,omitempty" json:"max_bytes_in_flight,omitempty"`
	// AdminTokenEnv names the environment variable holding the bearer token
	// of the gateway's admin API (default SAGEBENCH_ADMIN_TOKEN, when set).
	AdminTokenEnv string `yaml:"admin_token_env,omitempty" json:"admin_token_env,omitempty"`
	// StackConfig is a reference-stack YAML for the embedded target (empty:
	// the workload's default stack).
	StackConfig string `yaml:"stack_config,omitempty" json:"stack_config,omitempty"`
	// OutputControl is how chat requests pin their output length:
	// "vllm" sends ignore_eos: true and min_tokens = max_tokens (vLLM,
	// SGLang, TensorRT-LLM), "ignore_eos" only the first, "none" neither
	// (OpenAI's own API refuses both). Empty: vllm for a URL target, none
	// for the embedded stack (its engines always generate max_tokens).
	OutputControl string `yaml:"output_control,omitempty" json:"output_control,omitempty"`
	// Retry is the client's retry policy (docs/requests.md); nil sends
	// every request exactly once. (A pointer: Config stays comparable.)
	Retry *openai.RetryPolicy `yaml:"retry,omitempty" json:"retry,omitempty"`
}

// Output controls (Config.OutputControl).
const (
	OutputVLLM      = "vllm"
	OutputIgnoreEOS = "ignore_eos"
	OutputNone      = "none"
)

// OutputControl is what a chat request sends to pin its output length.
type OutputControl struct {
	IgnoreEOS bool // "ignore_eos": true
	MinTokens bool // "min_tokens": max_tokens
}

// outputControl resolves c.OutputControl (validated).
func (c Config) outputControl() OutputControl {
	mode := c.OutputControl
	if mode == "" {
		mode = OutputVLLM
		if c.IsEmbedded() {
			mode = OutputNone
		}
	}
	return OutputControl{IgnoreEOS: mode != OutputNone, MinTokens: mode == OutputVLLM}
}

// DefaultTimeout bounds one request when Config.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// IsEmbedded reports whether c selects the reference stack.
func (c Config) IsEmbedded() bool { return c.URL == "" || strings.EqualFold(c.URL, Embedded) }

// Validate checks the URL form; it does not contact the target.
func (c Config) Validate() error {
	if c.Timeout < 0 || c.FirstByteTimeout < 0 {
		return errors.New("target.timeout and target.first_byte_timeout must be ≥ 0 (0 = default)")
	}
	if c.MaxConns < 0 || c.MaxBytesInFlight < 0 {
		return errors.New("target.max_conns and target.max_bytes_in_flight must be ≥ 0 (0 = default)")
	}
	switch c.OutputControl {
	case "", OutputVLLM, OutputIgnoreEOS, OutputNone:
	default:
		return fmt.Errorf("target.output_control %q: use vllm (ignore_eos + min_tokens), ignore_eos, or none", c.OutputControl)
	}
	if c.Retry != nil {
		if err := c.Retry.Validate(); err != nil {
			return err
		}
	}
	if c.IsEmbedded() {
		return nil
	}
	if c.StackConfig != "" {
		return errors.New("target.stack_config applies to the embedded target only; remove it or use --target embedded")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("target %q: want \"embedded\" or an http(s)://host:port base URL", redact.URL(c.URL))
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return fmt.Errorf("target %s: a base URL takes no query or fragment (paths are appended to it); pass an API key with target.api_key_env", Describe(c.URL))
	}
	return nil
}

// APIKey returns the key named by APIKeyEnv ("" when none). A named but
// unset variable is an error, so a run never goes out silently unauthenticated.
func (c Config) APIKey() (string, error) {
	if c.APIKeyEnv == "" {
		return "", nil
	}
	v, ok := os.LookupEnv(c.APIKeyEnv)
	if !ok || v == "" {
		return "", fmt.Errorf("target.api_key_env names %s, which is not set; export it or remove api_key_env", c.APIKeyEnv)
	}
	return v, nil
}

// clientConfig is the openai client configuration for base.
func (c Config) clientConfig(base string) openai.Config {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	cfg := openai.Config{BaseURL: base, APIKeyEnv: c.APIKeyEnv, Timeout: timeout,
		FirstByteTimeout: c.FirstByteTimeout, MaxConns: c.MaxConns, MaxBytesInFlight: c.MaxBytesInFlight}
	if c.Retry != nil {
		cfg.Retry = *c.Retry
	}
	return cfg
}

// Describe returns the URL with any user info, query and fragment removed.
func Describe(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// BaseURL trims a trailing "/" and "/v1" so paths can be appended.
func BaseURL(raw string) string {
	s := strings.TrimRight(raw, "/")
	return strings.TrimSuffix(s, "/v1")
}

// StackSpec says which reference stack to start.
type StackSpec struct {
	Path string // a `sagebench serve` stack YAML (Config.StackConfig); wins over YAML
	YAML []byte // the workload's default stack YAML; empty: the stack's defaults
	Seed int64  // seeds the simulated engines
	// Tokenizer is the run's tokenizer (nil: the default), which the stack
	// counts prompt tokens with unless its YAML names one; loaded once per
	// command, not per start.
	Tokenizer *tokenizer.Ref
	// EmbeddingTokenizer, when set, is the run's embedding tokenizer,
	// which the stack's embedders count inputs with unless its YAML names
	// one.
	EmbeddingTokenizer *tokenizer.Ref
	// ChatTemplate is the run's chat template file (Shared.ChatTemplate),
	// which the stack renders prompts with unless its YAML names one.
	ChatTemplate string
	// Attach, when set, receives the started stack's drill handle.
	Attach func(Faults)
}

// Starter starts the embedded reference stack and returns its base URL and
// how to stop it.
type Starter func(ctx context.Context, spec StackSpec) (baseURL string, stop func(context.Context) error, err error)

// Target is an opened system under test.
type Target struct {
	base     string
	desc     string
	embedded bool
	apiKey   string
	admin    string // admin API bearer token
	redactor *redact.Redactor
	http     *http.Client
	client   *openai.Client
	stop     func(context.Context) error
	faults   Faults // the embedded stack's drill handle (nil for a URL target)
	output   OutputControl
}

// OutputControl says what chat requests send to pin their output length
// (Config.OutputControl); the zero value for a Target not from Open.
func (t *Target) OutputControl() OutputControl {
	if t == nil {
		return OutputControl{}
	}
	return t.output
}

// URL is the base URL (no trailing /v1).
func (t *Target) URL() string { return t.base }

// Description is a secret-free description for records and logs.
func (t *Target) Description() string { return t.desc }

// IsEmbedded reports whether the target is the in-process reference stack.
func (t *Target) IsEmbedded() bool { return t.embedded }

// Client is the OpenAI-compatible client for the target's traffic.
func (t *Target) Client() *openai.Client { return t.client }

// Close releases the client and stops the embedded stack (a URL target
// has nothing to stop). It is safe to call more than once.
func (t *Target) Close(ctx context.Context) error {
	if t.client != nil {
		t.client.Close()
	}
	if t.stop == nil {
		return nil
	}
	stop := t.stop
	t.stop = nil
	return stop(ctx)
}
