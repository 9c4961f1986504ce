package stack

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/gateway"
	"github.com/sagebench/sagebench/internal/stack/index"
	"github.com/sagebench/sagebench/internal/stack/sched"
	"github.com/sagebench/sagebench/internal/strictyaml"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Config describes a whole reference stack. Zero values take the defaults
// noted on each field; DefaultConfig fills a useful pool.
type Config struct {
	Listen string `yaml:"listen"` // host:port; port 0 picks a free one (default 127.0.0.1:8080)
	// Topology is one (default: the gateway in the serving process) or
	// split (every part its own process behind a proxy; see TopologySplit).
	Topology  string         `yaml:"topology"`
	Policy    string         `yaml:"policy"` // fifo | priority | slo_aware | fair_share | hybrid | adaptive
	Seed      int64          `yaml:"seed"`   // engines without their own seed use seed+position
	Engines   []EngineConfig `yaml:"engines"`
	Index     IndexConfig    `yaml:"index"`
	Limits    Limits         `yaml:"limits"`
	Scheduler SchedConfig    `yaml:"scheduler"`
	Quotas    QuotaConfig    `yaml:"quotas"`
	Health    HealthConfig   `yaml:"health"`
	Admin     AdminConfig    `yaml:"admin"`
	Metrics   MetricsConfig  `yaml:"metrics"`
	// Tokenizer counts chat prompts in tokens: cl100k_base (empty, the
	// default), o200k_base or a Hugging Face tokenizer.json path — the
	// same as the harness's, so usage.prompt_tokens is what it intended.
	Tokenizer string `yaml:"tokenizer,omitempty"`
	// EmbeddingTokenizer counts the simulated embedders' inputs in
	// tokens (a spec as Tokenizer's: the embedding model's, a BERT
	// WordPiece tokenizer.json say); empty: whitespace-separated words.
	EmbeddingTokenizer string `yaml:"embedding_tokenizer,omitempty"`
	// ChatTemplate, when set, is a tokenizer_config.json (or Jinja file)
	// whose chat template the simulated LLMs render the messages with
	// before counting them, as a real server does.
	ChatTemplate string `yaml:"chat_template,omitempty"`
}

// EngineConfig is one engine: a simulated profile (in-process, or a child
// process with process: true) or a remote OpenAI-compatible URL.
type EngineConfig struct {
	ID        string `yaml:"id"`
	Kind      string `yaml:"kind"`        // llm | embedding
	Profile   string `yaml:"profile"`     // a profile from the catalog (sim engines)
	Process   bool   `yaml:"process"`     // run the profile as `sagebench serve engine` in a child process
	Seed      int64  `yaml:"seed"`        // 0: the stack's seed + position
	URL       string `yaml:"url"`         // remote engine base URL (instead of profile)
	Model     string `yaml:"model"`       // remote engine's model (required with url)
	Slots     int    `yaml:"slots"`       // concurrency: a remote engine's (default 64); for an LLM profile, caps its max_num_seqs
	APIKeyEnv string `yaml:"api_key_env"` // env var holding the remote engine's API key
}

// IndexConfig is the vector index behind /v1/retrieve. Size 0 disables it.
type IndexConfig struct {
	Size     int    `yaml:"size"`      // documents in the synthetic corpus
	Seed     int64  `yaml:"seed"`      // corpus seed (default: the stack's seed)
	Embedder string `yaml:"embedder"`  // engine id whose model and dimension the index uses (default: first embedding engine)
	M        int    `yaml:"m"`         // HNSW neighbours per node (default 16)
	EfSearch int    `yaml:"ef_search"` // HNSW candidate list size (default 100)
}

// Limits bound what one request may ask and how long things may take.
type Limits struct {
	MaxBodyBytes     int64         `yaml:"max_body_bytes"`     // default 1 MiB
	MaxTokens        int           `yaml:"max_tokens"`         // largest max_tokens accepted (default 16384)
	DefaultMaxTokens int           `yaml:"default_max_tokens"` // when a request names none (default 256)
	MaxInputs        int           `yaml:"max_inputs"`         // embedding inputs per request (default 2048)
	QueueLimit       int           `yaml:"queue_limit"`        // queued requests per engine kind (default 10000)
	QueueTimeout     time.Duration `yaml:"queue_timeout"`      // longest wait for an engine slot (default 60s)
	StallTimeout     time.Duration `yaml:"stall_timeout"`      // longest engine silence before it counts as hung (default 15s)
	MaxBatch         int           `yaml:"max_batch"`          // hybrid's embedding batch size (default 64)
	ShutdownTimeout  time.Duration `yaml:"shutdown_timeout"`   // in-flight grace period on Close (default 10s)
	// MaxConns bounds the connections served at once (default 4096); one
	// past it gets /health answered or 503, and is closed (server.go).
	MaxConns int `yaml:"max_conns"`
	// BodyTimeout bounds the time a request's body may take to arrive
	// (default 10s); past it the answer is 408 and the connection closed.
	BodyTimeout time.Duration `yaml:"body_timeout"`
}

// SchedConfig tunes the policies.
type SchedConfig struct {
	Fallback        string        `yaml:"fallback"`         // hybrid's LLM policy (default priority)
	DefaultDeadline time.Duration `yaml:"default_deadline"` // slo_aware's SLO for requests without one (default 30s)
	SwitchEvery     time.Duration `yaml:"switch_every"`     // adaptive's re-evaluation period (default 1s)
}

// QuotaConfig holds per-tenant quotas and fair_share weights.
type QuotaConfig struct {
	Default sched.Quota            `yaml:"default"`
	Tenants map[string]sched.Quota `yaml:"tenants"`
}

// HealthConfig controls ejection and re-admission.
type HealthConfig struct {
	Interval   time.Duration `yaml:"interval"`    // probe period (default 1s)
	EjectAfter int           `yaml:"eject_after"` // consecutive failures that eject an engine (default 3)
}

// AdminConfig secures the admin API.
type AdminConfig struct {
	// TokenEnv names the env var holding the admin bearer token (default
	// SAGEBENCH_ADMIN_TOKEN). Required when Listen is not loopback.
	TokenEnv string `yaml:"token_env"`
}

// MetricsConfig bounds the Prometheus labels.
type MetricsConfig struct {
	MaxTenants int `yaml:"max_tenants"` // distinct tenant label values before "other" (default 16)
}

// DefaultConfig is two simulated Llama-3.1-8B-on-H100 engines, a CPU
// embedder and a 2,000-document index, on 127.0.0.1:8080, fifo.
func DefaultConfig() Config {
	return Config{
		Listen: "127.0.0.1:8080",
		Policy: sched.FIFO,
		Seed:   42,
		Engines: []EngineConfig{
			{ID: "llm-0", Kind: "llm", Profile: "llama3.1-8b-h100"},
			{ID: "llm-1", Kind: "llm", Profile: "llama3.1-8b-h100"},
			{ID: "embed-0", Kind: "embedding", Profile: "bge-small-cpu"},
		},
		Index: IndexConfig{Size: 2000},
	}
}

// LoadConfig reads a strict YAML stack config: unknown keys are errors.
// Fields absent from the file keep DefaultConfig's values, except engines,
// which the file replaces when it lists any.
func LoadConfig(path string) (Config, error) {
	data, err := strictyaml.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading stack config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("stack config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig decodes YAML over DefaultConfig (see LoadConfig) and validates.
func ParseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	def := cfg.Engines
	cfg.Engines = nil
	if len(bytes.TrimSpace(data)) > 0 {
		if err := unmarshalStrict(data, &cfg); err != nil {
			return Config{}, err
		}
	}
	if cfg.Engines == nil {
		cfg.Engines = def
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// unmarshalStrict decodes YAML with unknown keys as errors, formatted
// with the line and column.
func unmarshalStrict(data []byte, v any) error {
	if err := strictyaml.Unmarshal(data, v); err != nil {
		return strictyaml.OneLine("", data, err)
	}
	return nil
}

// Validate reports every impossible value, each naming its field.
func (c Config) Validate() error {
	var errs []error
	fail := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if err := tokenizer.Validate(c.Tokenizer); err != nil {
		fail("tokenizer", "%v", err)
	}
	if err := tokenizer.Validate(c.EmbeddingTokenizer); err != nil {
		fail("embedding_tokenizer", "%v", err)
	}
	if c.ChatTemplate != "" {
		if _, err := chattemplate.Load(c.ChatTemplate); err != nil {
			fail("chat_template", "%v", err)
		}
	}
	if _, port, err := net.SplitHostPort(c.Listen); c.Listen != "" && err != nil {
		fail("listen", "%q is not host:port (%v)", c.Listen, err)
	} else if _, perr := strconv.ParseUint(port, 10, 16); c.Listen != "" && perr != nil {
		fail("listen", "%q: the port must be a number from 0 to 65535", c.Listen)
	}
	if c.Topology != "" && c.Topology != TopologyOne && c.Topology != TopologySplit {
		fail("topology", "%q: want one or split", c.Topology)
	}
	if c.Policy != "" {
		if _, err := sched.New(c.Policy, sched.Config{Fallback: c.Scheduler.Fallback}); err != nil {
			fail("policy", "%v", err)
		}
	}
	if c.Scheduler.Fallback != "" {
		if _, err := sched.New(sched.Hybrid, sched.Config{Fallback: c.Scheduler.Fallback}); err != nil {
			fail("scheduler.fallback", "%v", err)
		}
	}
	if len(c.Engines) == 0 {
		fail("engines", "list at least one engine")
	}
	seen := map[string]bool{}
	for i, e := range c.Engines {
		if e.ID == GatewayID && c.Topology == TopologySplit {
			fail(fmt.Sprintf("engines[%d].id", i), "%q names the gateway's process in a split stack; rename the engine", e.ID)
		}
		if err := e.validate(); err != nil {
			fail(fmt.Sprintf("engines[%d]", i), "%v", err)
		}
		if seen[e.ID] {
			fail(fmt.Sprintf("engines[%d].id", i), "duplicate id %q", e.ID)
		}
		seen[e.ID] = true
	}
	errs = append(errs, c.validateLimits()...)
	errs = append(errs, c.validateRest()...)
	return errors.Join(errs...)
}

func (e EngineConfig) validate() error {
	switch {
	case !gateway.ValidEngineID(e.ID):
		return fmt.Errorf("id %q: want 1-64 letters, digits, '.', '_' or '-'", e.ID)
	case e.Kind != string(engine.KindLLM) && e.Kind != string(engine.KindEmbedding):
		return fmt.Errorf("kind %q: want llm or embedding", e.Kind)
	case (e.Profile == "") == (e.URL == ""):
		return errors.New("profile and url: set exactly one")
	case e.URL != "" && e.Model == "":
		return errors.New("model: required with url")
	case e.URL != "" && e.Process:
		return errors.New("process: only for profile engines")
	case e.Slots < 0:
		return fmt.Errorf("slots %d: must be ≥ 0", e.Slots)
	}
	return nil
}

func (c Config) validateLimits() []error {
	var errs []error
	l := c.Limits
	neg := func(field string, bad bool) {
		if bad {
			errs = append(errs, fmt.Errorf("limits.%s: must be ≥ 0 (0 = default)", field))
		}
	}
	neg("max_body_bytes", l.MaxBodyBytes < 0)
	neg("max_tokens", l.MaxTokens < 0)
	neg("default_max_tokens", l.DefaultMaxTokens < 0)
	neg("max_inputs", l.MaxInputs < 0)
	neg("queue_limit", l.QueueLimit < 0)
	neg("queue_timeout", l.QueueTimeout < 0)
	neg("stall_timeout", l.StallTimeout < 0)
	neg("max_batch", l.MaxBatch < 0)
	neg("shutdown_timeout", l.ShutdownTimeout < 0)
	neg("max_conns", l.MaxConns < 0)
	neg("body_timeout", l.BodyTimeout < 0)
	if l.MaxTokens > 0 && l.DefaultMaxTokens > l.MaxTokens {
		errs = append(errs, fmt.Errorf("limits.default_max_tokens: %d exceeds limits.max_tokens %d", l.DefaultMaxTokens, l.MaxTokens))
	}
	return errs
}

func (c Config) validateRest() []error {
	var errs []error
	if c.Index.Size < 0 || c.Index.Size > index.MaxSize {
		errs = append(errs, fmt.Errorf("index.size: %d must be in [0, %d]", c.Index.Size, index.MaxSize))
	}
	if c.Index.M < 0 || c.Index.EfSearch < 0 {
		errs = append(errs, errors.New("index: m and ef_search must be ≥ 0 (0 = default)"))
	}
	if c.Index.Embedder != "" {
		if e, ok := c.engine(c.Index.Embedder); !ok || e.Kind != string(engine.KindEmbedding) {
			errs = append(errs, fmt.Errorf("index.embedder: no embedding engine with id %q", c.Index.Embedder))
		}
	}
	if err := c.Quotas.Default.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("quotas.default: %w", err))
	}
	for name, q := range c.Quotas.Tenants {
		if err := q.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("quotas.tenants.%s: %w", name, err))
		}
	}
	if c.Health.Interval < 0 || c.Health.EjectAfter < 0 {
		errs = append(errs, errors.New("health: interval and eject_after must be ≥ 0 (0 = default)"))
	}
	if c.Scheduler.DefaultDeadline < 0 || c.Scheduler.SwitchEvery < 0 {
		errs = append(errs, errors.New("scheduler: default_deadline and switch_every must be ≥ 0 (0 = default)"))
	}
	if c.Metrics.MaxTenants < 0 {
		errs = append(errs, errors.New("metrics.max_tenants: must be ≥ 0 (0 = default)"))
	}
	return errs
}

func (c Config) engine(id string) (EngineConfig, bool) {
	for _, e := range c.Engines {
		if e.ID == id {
			return e, true
		}
	}
	return EngineConfig{}, false
}

// indexEmbedder is the engine whose model and dimension the index uses, or
// false when the stack has no index (size 0 or no embedding engine).
func (c Config) indexEmbedder() (EngineConfig, bool) {
	if c.Index.Size == 0 {
		return EngineConfig{}, false
	}
	if c.Index.Embedder != "" {
		return c.engine(c.Index.Embedder)
	}
	for _, e := range c.Engines {
		if e.Kind == string(engine.KindEmbedding) {
			return e, true
		}
	}
	return EngineConfig{}, false
}

// hasSimLLM says an engine of c is a simulated LLM in this process: one
// that counts prompts with c.Tokenizer.
func (c Config) hasSimLLM() bool {
	for _, ec := range c.Engines {
		if ec.Kind == string(engine.KindLLM) && ec.URL == "" && !ec.Process {
			return true
		}
	}
	return false
}
