package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sagebench/sagebench/internal/stack/gateway"
	"github.com/sagebench/sagebench/internal/stack/profile"
	"github.com/sagebench/sagebench/internal/stack/proxy"
	"github.com/sagebench/sagebench/internal/stack/sched"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Options are the process-level dependencies of a stack.
type Options struct {
	Logger   *slog.Logger         // nil: discard
	Registry *prometheus.Registry // nil: a fresh one (never the global registry)
	// EngineBinary is the sagebench executable run for process: true
	// engines (default: os.Executable()).
	EngineBinary string
	// EngineStderr receives child engines' stderr (nil: discarded).
	EngineStderr io.Writer
	// Getenv reads the admin token and remote API keys (default os.Getenv).
	Getenv func(string) string
	// LookupIP resolves the listen address's host name (default the
	// system resolver, hosts file included).
	LookupIP func(ctx context.Context, host string) ([]net.IP, error)
	// Catalog overrides the embedded profile catalog.
	Catalog *profile.Catalog
	// LoadTokenizer loads the config's tokenizer spec for the simulated
	// LLMs (nil: tokenizer.Load). A harness that loaded it already passes
	// its own, so a repetition does not parse a tokenizer.json again.
	LoadTokenizer func(spec string) (tokenizer.Tokenizer, error)
	// tokenizer and embedTokenizer are the config's, passed on to process
	// engines (LLMs and embedders).
	tokenizer, embedTokenizer string
}

// loadTokenizer is LoadTokenizer, else tokenizer.Load.
func (o Options) loadTokenizer(spec string) (tokenizer.Tokenizer, error) {
	if o.LoadTokenizer != nil {
		return o.LoadTokenizer(spec)
	}
	return tokenizer.Load(spec)
}

// Stack is a running reference stack.
type Stack struct {
	cfg     Config
	opts    Options
	catalog *profile.Catalog
	gw      *gateway.Gateway
	srv     *http.Server
	over    *http.Server // answers connections past limits.max_conns (server.go)
	gate    *connGate
	url     string
	cancel  context.CancelFunc // cancels every request context on hard stop
	served  chan error
	mu      sync.Mutex
	engines map[string]*built
	closed  sync.Once
	err     error
	drop    proxy.Countdown // API requests still to drop (DropResponses)
	conns   proxy.Conns     // the gateway's client connections (Cut)
	// tokenizer loads cfg.Tokenizer once, for the simulated LLMs that
	// count prompts with it (remote and process engines count their own).
	tokenizer func() (tokenizer.Tokenizer, error)
	// embedTokenizer loads cfg.EmbeddingTokenizer once, for the simulated
	// embedders (nil when the config names none: they count words).
	embedTokenizer func() (tokenizer.Tokenizer, error)
}

// Start builds the engines and index of cfg, binds cfg.Listen and serves.
// ctx bounds start-up only (child engines, index build); stop with Close.
func Start(ctx context.Context, cfg Config, opts Options) (*Stack, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &ConfigError{Err: err}
	}
	opts = opts.withDefaults()
	opts.tokenizer, opts.embedTokenizer = cfg.Tokenizer, cfg.EmbeddingTokenizer // process engines count with them too
	cat, err := opts.catalog()
	if err != nil {
		return nil, err
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:8080"
	}
	addr, err := resolveListen(ctx, cfg.Listen, opts.LookupIP)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	token, err := adminToken(cfg, addr, opts.Getenv)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	s := &Stack{cfg: cfg, opts: opts, catalog: cat, engines: map[string]*built{}, served: make(chan error, 1),
		tokenizer: sync.OnceValues(func() (tokenizer.Tokenizer, error) { return opts.loadTokenizer(cfg.Tokenizer) })}
	if cfg.EmbeddingTokenizer != "" {
		s.embedTokenizer = sync.OnceValues(func() (tokenizer.Tokenizer, error) { return opts.loadTokenizer(cfg.EmbeddingTokenizer) })
	}
	if err := s.startGateway(ctx, token, addr.hosts); err != nil {
		s.closeEngines()
		return nil, err
	}
	if err := s.listen(addr, token); err != nil {
		_ = s.gw.Close()
		s.closeEngines()
		return nil, err
	}
	opts.Logger.Info("stack serving", "url", s.url, "engines", len(cfg.Engines), "policy", s.gw.Policy())
	return s, nil
}

// catalog is o.Catalog, or the embedded one.
func (o Options) catalog() (*profile.Catalog, error) {
	if o.Catalog != nil {
		return o.Catalog, nil
	}
	cat, err := profile.Default()
	if err != nil { // the embedded catalog is broken: a build defect
		return nil, fmt.Errorf("profile catalog: %w", err)
	}
	return cat, nil
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.LookupIP == nil {
		o.LookupIP = lookupIP
	}
	return o
}

func (s *Stack) startGateway(ctx context.Context, token string, adminHosts []string) error {
	cfg := s.cfg
	quotas := sched.NewQuotas(cfg.Quotas.Default, cfg.Quotas.Tenants)
	gcfg := gateway.Config{
		Policy: cfg.Policy,
		Sched: sched.Config{Fallback: cfg.Scheduler.Fallback, DefaultDeadline: cfg.Scheduler.DefaultDeadline,
			SwitchEvery: cfg.Scheduler.SwitchEvery},
		Quotas: quotas, MaxBodyBytes: cfg.Limits.MaxBodyBytes, MaxTokens: cfg.Limits.MaxTokens,
		DefaultMaxTokens: cfg.Limits.DefaultMaxTokens, MaxInputs: cfg.Limits.MaxInputs,
		QueueLimit: cfg.Limits.QueueLimit, QueueTimeout: cfg.Limits.QueueTimeout, StallTimeout: cfg.Limits.StallTimeout,
		MaxBatch:   cfg.Limits.MaxBatch,
		EjectAfter: cfg.Health.EjectAfter, HealthInterval: cfg.Health.Interval,
		MaxTenantLabels: cfg.Metrics.MaxTenants, AdminToken: token, AdminHosts: adminHosts,
		Factory: s.factory, Registry: s.opts.Registry, Logger: s.opts.Logger,
	}
	if cfg.hasSimLLM() { // a bad tokenizer.json is a config error at start
		if _, err := s.tokenizer(); err != nil {
			return &ConfigError{Err: fmt.Errorf("tokenizer: %w", err)}
		}
	}
	for i, ec := range cfg.Engines {
		b, err := s.build(ctx, ec, cfg.Seed+int64(i)+1)
		if errors.Is(err, profile.ErrUnknown) {
			return &ConfigError{Err: fmt.Errorf("engines[%d].profile: %w", i, err)}
		}
		if err != nil {
			return fmt.Errorf("engines[%d] (%s): %w", i, ec.ID, err)
		}
		s.engines[ec.ID] = b
	}
	r, err := s.buildIndex(ctx)
	if err != nil {
		return err
	}
	if r != nil {
		gcfg.Retriever = r
	}
	gw, err := gateway.New(gcfg)
	if err != nil {
		return err
	}
	s.gw = gw
	for _, ec := range cfg.Engines {
		if err := gw.Add(ec.ID, s.engines[ec.ID].eng); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stack) listen(addr listenAddr, token string) error {
	ln, err := net.Listen("tcp", addr.bind)
	if err != nil {
		return fmt.Errorf("listen %s: %w", s.cfg.Listen, err)
	}
	if token == "" && !boundLoopback(ln) { // what was bound, whatever the name said
		ln.Close()
		return &ConfigError{Err: fmt.Errorf("listen %s bound %s, which is not loopback: set the admin token (admin.token_env) or listen on 127.0.0.1", s.cfg.Listen, ln.Addr())}
	}
	base, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.srv, s.over = s.servers(ln, base)
	s.url = "http://" + ln.Addr().String()
	go func() { s.served <- s.srv.Serve(s.gate) }()
	go func() { _ = s.over.Serve(s.gate.overflow) }()
	return nil
}

// URL is the gateway's base URL, e.g. http://127.0.0.1:41234.
func (s *Stack) URL() string { return s.url }

// Gateway returns the running gateway (admin operations, metrics).
func (s *Stack) Gateway() *gateway.Gateway { return s.gw }

// Config returns the configuration the stack runs.
func (s *Stack) Config() Config { return s.cfg }

// Wait yields the server's error if it stops serving on its own.
func (s *Stack) Wait() <-chan error { return s.served }

// Close stops accepting requests, lets in-flight ones finish until ctx is
// done or limits.shutdown_timeout passes, cancels the rest, then closes
// engines and stops child processes. It is safe to call more than once.
func (s *Stack) Close(ctx context.Context) error {
	s.closed.Do(func() {
		grace := s.cfg.Limits.ShutdownTimeout
		if grace <= 0 {
			grace = 10 * time.Second
		}
		sctx, cancel := context.WithTimeout(ctx, grace)
		defer cancel()
		err := s.srv.Shutdown(sctx)
		_ = s.over.Close()
		s.cancel() // in-flight streams see their context end
		if err != nil {
			_ = s.srv.Close()
			err = nil // timed out: the rest were cancelled, as documented
		}
		s.err = errors.Join(err, s.gw.Close())
		s.closeEngines()
		s.opts.Logger.Info("stack stopped", "url", s.url)
	})
	return s.err
}

// adminToken reads the admin token; a listen address that does not
// resolve to loopback requires one.
func adminToken(cfg Config, addr listenAddr, getenv func(string) string) (string, error) {
	env := cfg.Admin.TokenEnv
	if env == "" {
		env = "SAGEBENCH_ADMIN_TOKEN"
	}
	token := getenv(env)
	if token == "" && !addr.loopback {
		where := addr.bind
		if strings.HasPrefix(where, ":") {
			where = "every interface"
		}
		return "", fmt.Errorf("listen %s (%s) is not loopback: set the admin token in $%s (admin.token_env) or listen on 127.0.0.1", cfg.Listen, where, env)
	}
	return token, nil
}

// ConfigError is a stack configuration that cannot run (invalid values,
// unknown profiles, a missing admin token); the CLI exits 2 on it.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return "stack config: " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }
