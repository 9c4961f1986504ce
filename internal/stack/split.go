package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/goccy/go-yaml"
	"github.com/sagebench/sagebench/internal/stack/gateway"
	"github.com/sagebench/sagebench/internal/stack/profile"
	"github.com/sagebench/sagebench/internal/stack/proxy"
)

// Topologies of Config.Topology.
const (
	// TopologyOne runs the gateway in the process that starts the stack
	// (engines in it too, or as child processes with process: true).
	TopologyOne = "one"
	// TopologySplit runs every part in its own process: each simulated
	// engine as `sagebench serve engine`, the gateway as `sagebench serve`
	// reaching them by URL, and in front of it a proxy in the starting
	// process through which all traffic goes. A drill can then kill,
	// pause, slow down and restart the gateway (id "gateway") like an
	// engine, and cut the connections at the proxy.
	TopologySplit = "split"
)

// GatewayID names the split stack's gateway process in the fault methods.
const GatewayID = "gateway"

// Server is a running reference stack: in one process (*Stack) or split
// over processes (*Split). The fault methods are a drill's handle on it.
type Server interface {
	URL() string
	Wait() <-chan error
	Close(ctx context.Context) error
	Kill(id string) error
	Restart(ctx context.Context, id string) error
	Pause(id string) error
	Resume(id string) error
	Slowdown(id string, factor float64) error
	DropResponses(n int)
	Cut() (int, error)
	Process(id string) (int, error)
}

var (
	_ Server = (*Stack)(nil)
	_ Server = (*Split)(nil)
)

// Launch starts cfg in its topology: Start, or StartSplit for split.
func Launch(ctx context.Context, cfg Config, opts Options) (Server, error) {
	if cfg.Topology == TopologySplit {
		s, err := StartSplit(ctx, cfg, opts)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	s, err := Start(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Split is a running split stack (TopologySplit).
type Split struct {
	opts    Options
	dir     string // holds the gateway's config file
	mu      sync.Mutex
	engines map[string]*procEngine
	gateway *procEngine
	proxy   *proxy.Proxy
	closed  sync.Once
	err     error
}

// StartSplit starts the engines of cfg as processes, then the gateway
// as a process reaching them by URL on loopback, then the proxy in front
// of it on cfg.Listen. The gateway's admin API takes the token Start would
// (opts.Getenv), required when cfg.Listen is not loopback.
func StartSplit(ctx context.Context, cfg Config, opts Options) (*Split, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &ConfigError{Err: err}
	}
	opts = opts.withDefaults()
	opts.tokenizer, opts.embedTokenizer = cfg.Tokenizer, cfg.EmbeddingTokenizer // the engine processes count with them too
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:8080"
	}
	addr, err := resolveListen(ctx, cfg.Listen, opts.LookupIP)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	if _, err := adminToken(cfg, addr, opts.Getenv); err != nil {
		return nil, &ConfigError{Err: err}
	}
	cat, err := opts.catalog()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sagebench-split-")
	if err != nil {
		return nil, fmt.Errorf("split stack: %w", err)
	}
	s := &Split{opts: opts, dir: dir, engines: map[string]*procEngine{}}
	if err := s.start(ctx, cfg, cat); err != nil {
		_ = s.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	opts.Logger.Info("split stack serving", "url", s.URL(), "engines", len(cfg.Engines))
	return s, nil
}

func (s *Split) start(ctx context.Context, cfg Config, cat *profile.Catalog) error {
	gw := cfg
	gw.Topology, gw.Listen, gw.Engines = TopologyOne, "127.0.0.1:0", nil
	for i, ec := range cfg.Engines {
		if ec.URL != "" {
			gw.Engines = append(gw.Engines, ec)
			continue
		}
		remote, err := remoteSpec(cat, ec)
		if errors.Is(err, profile.ErrUnknown) {
			return &ConfigError{Err: fmt.Errorf("engines[%d].profile: %w", i, err)}
		}
		if err != nil {
			return err
		}
		seed := ec.Seed
		if seed == 0 {
			seed = cfg.Seed + int64(i) + 1
		}
		ch, err := startChild(ctx, s.opts, ec, seed, "127.0.0.1:0")
		if err != nil {
			return err
		}
		s.engines[ec.ID] = newProcEngine(s.opts, ec, seed, ch)
		remote.URL = ch.url
		gw.Engines = append(gw.Engines, remote)
	}
	return s.startGateway(ctx, gw, cfg.Listen, gatewayEnv(cfg, s.opts.Getenv))
}

// gatewayEnv is this process's environment with the admin token variable
// set to what getenv says (absent when it says nothing): the gateway's
// process must check the token this stack would, no other.
func gatewayEnv(cfg Config, getenv func(string) string) []string {
	name := cfg.Admin.TokenEnv
	if name == "" {
		name = "SAGEBENCH_ADMIN_TOKEN"
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			env = append(env, kv)
		}
	}
	if v := getenv(name); v != "" {
		env = append(env, name+"="+v)
	}
	return env
}

// remoteSpec is the gateway's view of profile engine ec run as a process:
// a remote engine of the profile's model with its slots.
func remoteSpec(cat *profile.Catalog, ec EngineConfig) (EngineConfig, error) {
	sz, err := sizeOf(cat, ec)
	return EngineConfig{ID: ec.ID, Kind: ec.Kind, Model: sz.model, Slots: sz.slots}, err
}

// startGateway writes gw as the gateway's config, starts `sagebench
// serve` on it with env, and the proxy in front of it on listen.
func (s *Split) startGateway(ctx context.Context, gw Config, listen string, env []string) error {
	b, err := yaml.Marshal(gw)
	if err != nil {
		return fmt.Errorf("split stack: the gateway's config: %w", err)
	}
	path := filepath.Join(s.dir, "gateway.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("split stack: %w", err)
	}
	start := func(ctx context.Context, listen string) (*child, error) {
		return startProcess(ctx, s.opts, "gateway process", []string{"serve", "--config", path, "--listen", listen}, env)
	}
	ch, err := start(ctx, "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.gateway = &procEngine{name: "gateway process", cur: ch, start: start}
	s.proxy, err = proxy.Start(listen, ch.url)
	return err
}

// URL is the proxy's base URL: where the stack's clients connect.
func (s *Split) URL() string { return s.proxy.URL() }

// Wait never yields: the proxy serves until Close.
func (s *Split) Wait() <-chan error { return make(chan error) }

// Close stops the proxy, then the gateway (SIGTERM: it drains), then the
// engines. It is safe to call more than once.
func (s *Split) Close(context.Context) error {
	s.closed.Do(func() {
		if s.proxy != nil {
			s.err = s.proxy.Close()
		}
		if s.gateway != nil {
			s.gateway.stop()
		}
		s.mu.Lock()
		for _, p := range s.engines {
			p.stop()
		}
		s.mu.Unlock()
		s.err = errors.Join(s.err, os.RemoveAll(s.dir))
		s.opts.Logger.Info("split stack stopped")
	})
	return s.err
}

// proc is the process called id: the gateway or an engine.
func (s *Split) proc(id string) (*procEngine, error) {
	if id == GatewayID {
		return s.gateway, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.engines[id]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("engine %q: %w (or it does not run in a process of its own)", id, gateway.ErrUnknownEngine)
}

// Kill SIGKILLs process id (an engine, or "gateway"): down until Restart.
func (s *Split) Kill(id string) error { return s.signal(id, syscall.SIGKILL) }

// Pause SIGSTOPs process id.
func (s *Split) Pause(id string) error { return s.signal(id, syscall.SIGSTOP) }

// Resume SIGCONTs process id.
func (s *Split) Resume(id string) error { return s.signal(id, syscall.SIGCONT) }

func (s *Split) signal(id string, sig syscall.Signal) error {
	p, err := s.proc(id)
	if err != nil {
		return err
	}
	p.stopCycle()
	return p.signal(sig)
}

// Restart starts process id again on its address (it is killed first if
// it still runs).
func (s *Split) Restart(ctx context.Context, id string) error {
	p, err := s.proc(id)
	if err != nil {
		return err
	}
	return p.restart(ctx)
}

// Slowdown makes process id run 1/factor of each 100 ms (1: normal).
func (s *Split) Slowdown(id string, factor float64) error {
	if factor <= 0 {
		return fmt.Errorf("slowdown factor %v: must be > 0", factor)
	}
	p, err := s.proc(id)
	if err != nil {
		return err
	}
	p.slowdown(factor)
	return nil
}

// DropResponses makes the proxy drop the next n API answers.
func (s *Split) DropResponses(n int) { s.proxy.Drop(n) }

// Cut drops every client connection at the proxy.
func (s *Split) Cut() (int, error) { return s.proxy.Cut(), nil }

// Process returns the OS process id of an engine or of the gateway.
func (s *Split) Process(id string) (int, error) {
	p, err := s.proc(id)
	if err != nil {
		return 0, err
	}
	return p.current().cmd.Process.Pid, nil
}
