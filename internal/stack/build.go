package stack

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/stack/engine"
	"github.com/sagebench/sagebench/internal/stack/gateway"
	"github.com/sagebench/sagebench/internal/stack/profile"
	"github.com/sagebench/sagebench/internal/stack/remote"
	"github.com/sagebench/sagebench/internal/stack/sim"
)

// Drill is what a fault drill can do to a simulated engine.
type Drill interface {
	SetSlowdown(factor float64)
	Pause()
	Resume()
}

// built is one engine the stack made, with its handles for drills.
type built struct {
	cfg   EngineConfig
	eng   gateway.Member
	drill Drill       // in-process sim engines
	child *procEngine // process engines
	dim   int         // embedders with a known dimension
}

func (s *Stack) build(ctx context.Context, ec EngineConfig, seed int64) (*built, error) {
	if ec.Seed != 0 {
		seed = ec.Seed
	}
	var b *built
	var err error
	switch {
	case ec.URL != "":
		b, err = s.buildRemote(ec, ec.URL, s.apiKey(ec))
	case ec.Process:
		b, err = s.buildProcess(ctx, ec, seed)
	default:
		b, err = s.buildSim(ec, seed)
	}
	if err != nil {
		return nil, err
	}
	if c := b.eng.Close; c != nil {
		var once sync.Once
		b.eng.Close = func() error { once.Do(func() { _ = c() }); return nil }
	}
	return b, nil
}

func (s *Stack) apiKey(ec EngineConfig) string {
	if ec.APIKeyEnv == "" {
		return ""
	}
	return s.opts.Getenv(ec.APIKeyEnv)
}

func (s *Stack) buildSim(ec EngineConfig, seed int64) (*built, error) {
	opts := sim.Options{Seed: seed}
	if ec.Kind == string(engine.KindLLM) {
		p, err := s.catalog.LLM(ec.Profile)
		if err != nil {
			return nil, err
		}
		if ec.Slots > 0 { // a smaller running batch: the gateway queues the rest
			p.MaxNumSeqs = min(p.MaxNumSeqs, ec.Slots)
		}
		if opts.Tokenizer, err = s.tokenizer(); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if s.cfg.ChatTemplate != "" {
			if opts.ChatTemplate, err = chattemplate.Load(s.cfg.ChatTemplate); err != nil {
				return nil, err
			}
		}
		e := sim.NewLLM(ec.ID, p, opts)
		return &built{cfg: ec, drill: e, eng: gateway.Member{LLM: e, Speed: p.IdleITL(), Profile: ec.Profile,
			Close: func() error { e.Close(); return nil }}}, nil
	}
	p, err := s.catalog.Embedder(ec.Profile)
	if err != nil {
		return nil, err
	}
	if s.embedTokenizer != nil {
		if opts.Tokenizer, err = s.embedTokenizer(); err != nil {
			return nil, fmt.Errorf("embedding_tokenizer: %w", err)
		}
	}
	e := sim.NewEmbedder(ec.ID, p, opts)
	return &built{cfg: ec, drill: e, dim: p.Dim, eng: gateway.Member{Embedder: e, Speed: p.BatchTime(p.MaxBatch * 16),
		Profile: ec.Profile, Close: func() error { e.Close(); return nil }}}, nil
}

func (s *Stack) buildRemote(ec EngineConfig, url, key string) (*built, error) {
	rc := remote.Config{ID: ec.ID, URL: url, Model: ec.Model, Slots: ec.Slots, APIKey: key}
	if ec.Kind == string(engine.KindLLM) {
		e, err := remote.NewLLM(rc)
		if err != nil {
			return nil, err
		}
		return &built{cfg: ec, eng: gateway.Member{LLM: e, URL: url}}, nil
	}
	e, err := remote.NewEmbedder(rc)
	if err != nil {
		return nil, err
	}
	return &built{cfg: ec, eng: gateway.Member{Embedder: e, URL: url}}, nil
}

// sizing is what a profile engine run as a process looks like from the
// gateway: its model, its slots (the profile's running batch, capped by
// the engine's slots), its speed and (embedders) its dimension.
type sizing struct {
	model string
	slots int
	speed time.Duration
	dim   int
}

func sizeOf(cat *profile.Catalog, ec EngineConfig) (sizing, error) {
	if ec.Kind == string(engine.KindLLM) {
		p, err := cat.LLM(ec.Profile)
		if err != nil {
			return sizing{}, err
		}
		if ec.Slots > 0 {
			p.MaxNumSeqs = min(p.MaxNumSeqs, ec.Slots)
		}
		return sizing{model: p.Model, slots: p.MaxNumSeqs, speed: p.IdleITL()}, nil
	}
	p, err := cat.Embedder(ec.Profile)
	if err != nil {
		return sizing{}, err
	}
	return sizing{model: p.Model, slots: p.MaxBatch, speed: p.BatchTime(p.MaxBatch * 16), dim: p.Dim}, nil
}

// buildProcess starts `sagebench serve engine` for the profile and fronts
// it with a remote client sized from the profile.
func (s *Stack) buildProcess(ctx context.Context, ec EngineConfig, seed int64) (*built, error) {
	sz, err := sizeOf(s.catalog, ec)
	if err != nil {
		return nil, err
	}
	rc := ec
	rc.Model, rc.Slots = sz.model, sz.slots
	speed, dim := sz.speed, sz.dim
	ch, err := startChild(ctx, s.opts, ec, seed, "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b, err := s.buildRemote(rc, ch.url, "")
	if err != nil {
		ch.stop()
		return nil, err
	}
	p := newProcEngine(s.opts, ec, seed, ch)
	b.child, b.dim = p, dim
	b.eng.Speed, b.eng.Profile = speed, ec.Profile
	b.eng.Close = func() error { p.stop(); return nil }
	return b, nil
}

// newProcEngine is the process engine ec (seeded with seed) running as ch.
func newProcEngine(opts Options, ec EngineConfig, seed int64, ch *child) *procEngine {
	return &procEngine{name: "engine process " + ec.ID, cur: ch, start: func(ctx context.Context, listen string) (*child, error) {
		return startChild(ctx, opts, ec, seed, listen)
	}}
}

// factory builds engines for POST /admin/engines.
func (s *Stack) factory(ctx context.Context, spec gateway.EngineSpec) (gateway.Member, error) {
	ec := EngineConfig{ID: spec.ID, Kind: spec.Kind, Profile: spec.Profile, URL: spec.URL, Model: spec.Model, Slots: spec.Slots}
	if err := ec.validate(); err != nil {
		return gateway.Member{}, err
	}
	b, err := s.build(ctx, ec, s.cfg.Seed+int64(len(s.cfg.Engines))+100)
	if err != nil {
		return gateway.Member{}, err
	}
	s.mu.Lock()
	s.engines[ec.ID] = b
	s.mu.Unlock()
	return b.eng, nil
}

// Drill returns the drill handle of an in-process simulated engine.
func (s *Stack) Drill(id string) (Drill, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.engines[id]
	if !ok {
		return nil, fmt.Errorf("engine %q: %w", id, gateway.ErrUnknownEngine)
	}
	if b.drill == nil {
		return nil, fmt.Errorf("engine %q is not an in-process simulated engine", id)
	}
	return b.drill, nil
}

// Process returns the OS process id of a process engine, for drills that
// send it signals (SIGKILL, SIGSTOP).
func (s *Stack) Process(id string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.engines[id]
	if !ok {
		return 0, fmt.Errorf("engine %q: %w", id, gateway.ErrUnknownEngine)
	}
	if b.child == nil {
		return 0, fmt.Errorf("engine %q does not run in its own process (set process: true)", id)
	}
	return b.child.current().cmd.Process.Pid, nil
}

// closeEngines closes every engine the stack built, gateway or not.
func (s *Stack) closeEngines() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.engines {
		if b.eng.Close != nil {
			_ = b.eng.Close()
		}
	}
}
