package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/sched"
)

// Config tunes a Gateway. Zero fields take the defaults documented on them.
type Config struct {
	Policy           string        // scheduling policy (default fifo)
	Sched            sched.Config  // policy parameters
	Quotas           *sched.Quotas // per-tenant admission; nil = unlimited
	MaxBodyBytes     int64         // request body limit (default 1 MiB)
	MaxTokens        int           // largest max_tokens accepted (default 16384)
	DefaultMaxTokens int           // when a request names none (default 256)
	MaxInputs        int           // largest embedding input list (default 2048)
	QueueLimit       int           // queued requests per kind (default 10000)
	QueueTimeout     time.Duration // longest wait for a slot (default 60s)
	StallTimeout     time.Duration // longest engine silence before a token (default 15s)
	MaxBatch         int           // hybrid's embedding batch (default 64)
	EjectAfter       int           // consecutive failures that eject (default 3)
	HealthInterval   time.Duration // probe period (default 1s)
	MaxTenantLabels  int           // distinct tenant label values (default 16)
	AdminToken       string        // bearer token for /admin/; "" = open
	// AdminHosts, when not nil, are the Host names besides loopback IP
	// literals the admin API answers (DNS rebinding): the stack sets
	// them when it listens on loopback. nil: any Host (the token guards).
	AdminHosts []string
	Retriever  Retriever // /v1/retrieve; nil = 404
	Factory    Factory   // builds engines for POST /admin/engines
	Registry   *prometheus.Registry
	Logger     *slog.Logger
	Now        func() time.Time
}

// Factory builds an engine from an admin request.
type Factory func(ctx context.Context, spec EngineSpec) (Member, error)

// EngineSpec is the body of POST /admin/engines.
type EngineSpec struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Profile string `json:"profile,omitempty"`
	URL     string `json:"url,omitempty"`
	Model   string `json:"model,omitempty"`
	Slots   int    `json:"slots,omitempty"`
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.Policy == "" {
		c.Policy = sched.FIFO
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	def(&c.MaxTokens, 16384)
	def(&c.DefaultMaxTokens, 256)
	def(&c.MaxInputs, 2048)
	def(&c.QueueLimit, 10000)
	def(&c.MaxBatch, 64)
	def(&c.EjectAfter, 3)
	def(&c.MaxTenantLabels, 16)
	if c.QueueTimeout <= 0 {
		c.QueueTimeout = 60 * time.Second
	}
	if c.StallTimeout <= 0 {
		c.StallTimeout = 15 * time.Second
	}
	if c.HealthInterval <= 0 {
		c.HealthInterval = time.Second
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Quotas == nil {
		c.Quotas = sched.NewQuotas(sched.Quota{}, nil)
	}
	return c
}

// Gateway serves the OpenAI-compatible API over a set of engines.
type Gateway struct {
	cfg     Config
	pools   map[engine.Kind]*pool
	mu      sync.RWMutex // guards byID, order, policy
	byID    map[string]*entry
	order   []string
	policy  string
	met     *metrics
	handler http.Handler
	ids     *ids
	stop    chan struct{}
	wg      sync.WaitGroup
	closeMu sync.Once
}

// New returns a gateway with no engines; add them with Add.
func New(cfg Config) (*Gateway, error) {
	cfg = cfg.withDefaults()
	if w, dw := cfg.Quotas.Weights(); len(w) > 0 || dw > 0 {
		if cfg.Sched.Weights == nil {
			cfg.Sched.Weights = w
		}
		if cfg.Sched.DefaultWeight == 0 {
			cfg.Sched.DefaultWeight = dw
		}
	}
	g := &Gateway{cfg: cfg, byID: map[string]*entry{}, stop: make(chan struct{}), ids: newIDs()}
	g.pools = map[engine.Kind]*pool{}
	for _, k := range []engine.Kind{engine.KindLLM, engine.KindEmbedding} {
		g.pools[k] = &pool{kind: k, g: g, policy: cfg.Policy, queues: map[string]sched.Policy{}}
	}
	if _, err := sched.New(cfg.Policy, cfg.Sched); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	g.policy = cfg.Policy
	met, err := newMetrics(g)
	if err != nil {
		return nil, err
	}
	g.met = met
	g.handler = g.routes()
	g.wg.Add(1)
	go g.healthLoop()
	return g, nil
}

func (g *Gateway) now() time.Time { return g.cfg.Now() }

// Handler returns the HTTP API.
func (g *Gateway) Handler() http.Handler { return g.handler }

// Registry returns the gateway's own Prometheus registry.
func (g *Gateway) Registry() *prometheus.Registry { return g.cfg.Registry }

// Add puts an engine into service under id.
func (g *Gateway) Add(id string, e Member) error {
	if (e.LLM == nil) == (e.Embedder == nil) {
		return fmt.Errorf("engine %q: set exactly one of LLM and Embedder", id)
	}
	if id == "" {
		return errors.New("engine id: required")
	}
	m := &entry{id: id, eng: e, speed: e.Speed}
	if e.LLM != nil {
		m.kind, m.model = engine.KindLLM, e.LLM.Model()
	} else {
		m.kind, m.model = engine.KindEmbedding, e.Embedder.Model()
	}
	g.mu.Lock()
	if _, dup := g.byID[id]; dup {
		g.mu.Unlock()
		return fmt.Errorf("engine %q: already exists", id)
	}
	g.byID[id] = m
	g.order = append(g.order, id)
	g.mu.Unlock()
	p := g.pools[m.kind]
	p.mu.Lock()
	p.members = append(p.members, m)
	p.dispatchLocked()
	p.mu.Unlock()
	g.cfg.Logger.Info("engine added", "engine", id, "kind", m.kind, "model", m.model)
	return nil
}

// ErrUnknownEngine is returned for an engine id the gateway does not hold.
var ErrUnknownEngine = errors.New("unknown engine")

func (g *Gateway) member(id string) (*entry, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	m, ok := g.byID[id]
	if !ok {
		return nil, fmt.Errorf("engine %q: %w", id, ErrUnknownEngine)
	}
	return m, nil
}

// Drain stops routing new work to id and returns once its in-flight
// requests have finished, or when ctx is done.
func (g *Gateway) Drain(ctx context.Context, id string) error {
	m, err := g.member(id)
	if err != nil {
		return err
	}
	p := g.pools[m.kind]
	p.mu.Lock()
	if m.state != stateDraining && m.state != stateDrained {
		m.state, m.idle = stateDraining, make(chan struct{})
		if m.running == 0 {
			m.state = stateDrained
			close(m.idle)
		}
		p.dispatchLocked() // fails queued work if nothing else serves it
	}
	idle := m.idle
	p.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("draining engine %q: %w", id, ctx.Err())
	}
}

// Remove takes id out of service at once; its in-flight requests finish
// before the engine is closed (if the gateway owns it).
func (g *Gateway) Remove(id string) error {
	m, err := g.member(id)
	if err != nil {
		return err
	}
	g.mu.Lock()
	delete(g.byID, id)
	for i, o := range g.order {
		if o == id {
			g.order = append(g.order[:i:i], g.order[i+1:]...)
			break
		}
	}
	g.mu.Unlock()
	p := g.pools[m.kind]
	p.mu.Lock()
	for i, o := range p.members {
		if o == m {
			p.members = append(p.members[:i:i], p.members[i+1:]...)
			break
		}
	}
	switch {
	case m.state == stateDraining: // release closes idle after the last request
	case m.state == stateDrained:
	case m.running == 0:
		m.idle = make(chan struct{})
		close(m.idle)
	default:
		m.state, m.idle = stateDraining, make(chan struct{})
	}
	idle := m.idle
	p.dispatchLocked()
	p.mu.Unlock()
	g.cfg.Logger.Info("engine removed", "engine", id)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		select {
		case <-idle:
		case <-g.stop:
		}
		g.closeEngine(m)
	}()
	return nil
}

func (g *Gateway) closeEngine(m *entry) {
	if m.eng.Close != nil {
		if err := m.eng.Close(); err != nil {
			g.cfg.Logger.Warn("closing engine", "engine", m.id, "err", err)
		}
	}
}

// SetPolicy switches every queue to the named policy, moving queued
// requests across in admission order; nothing is dropped.
func (g *Gateway) SetPolicy(name string) error {
	if _, err := sched.New(name, g.cfg.Sched); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.pools {
		p.mu.Lock()
		p.policy = name
		for model, q := range p.queues {
			next, _ := sched.New(name, g.cfg.Sched)
			sched.Transfer(next, q, g.now())
			p.queues[model] = next
		}
		p.dispatchLocked()
		p.mu.Unlock()
	}
	g.policy = name
	g.cfg.Logger.Info("policy switched", "policy", name)
	return nil
}

// Policy names the current policy.
func (g *Gateway) Policy() string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.policy
}

// Close stops health checks and closes the engines the gateway owns.
// In-flight HTTP requests are the server's to finish first.
func (g *Gateway) Close() error {
	g.closeMu.Do(func() {
		close(g.stop)
		g.wg.Wait()
		g.mu.Lock()
		ids := append([]string(nil), g.order...)
		g.mu.Unlock()
		for _, id := range ids {
			if m, err := g.member(id); err == nil {
				g.closeEngine(m)
			}
		}
	})
	return nil
}

// ejectLocked takes m out of routing; the caller holds its pool's mutex.
func (g *Gateway) ejectLocked(m *entry, err error) {
	m.state = stateEjected
	g.met.ejections.WithLabelValues(m.id).Inc()
	g.cfg.Logger.Warn("engine ejected", "engine", m.id, "err", err)
}

// models lists the models served, sorted, with their kind.
func (g *Gateway) models() map[string]engine.Kind {
	out := map[string]engine.Kind{}
	g.mu.RLock()
	defer g.mu.RUnlock()
	for _, m := range g.byID {
		out[m.model] = m.kind
	}
	return out
}

// resolveModel maps a requested model to its pool; "" picks the first
// engine of want's kind.
func (g *Gateway) resolveModel(model string, want engine.Kind) (string, *apiError) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if model == "" {
		for _, id := range g.order {
			if m := g.byID[id]; m.kind == want {
				return m.model, nil
			}
		}
		return "", unavailable("no %s engine is configured", want)
	}
	for _, m := range g.byID {
		if m.model == model {
			if m.kind != want {
				return "", badRequest("model_not_supported", "field model: %q is a %s model, not %s", model, m.kind, want)
			}
			return model, nil
		}
	}
	return "", notFound("model_not_found", "field model: unknown model %q (GET /v1/models lists them)", model)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
