package sched

import (
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// hybrid batches embedding requests by model (PopBatch gathers the oldest
// request and later ones for the same model) and orders LLM requests with a
// fallback policy.
type hybrid struct {
	embed    fifoPolicy
	fallback Policy
}

func newHybrid(cfg Config) (Policy, error) {
	name := cfg.Fallback
	if name == "" {
		name = Prio
	}
	if name == Hybrid || name == Adaptive {
		return nil, fmt.Errorf("hybrid fallback %q: want fifo, priority, slo_aware or fair_share", name)
	}
	fb, err := New(name, cfg)
	if err != nil {
		return nil, fmt.Errorf("hybrid fallback: %w", err)
	}
	return &hybrid{fallback: fb}, nil
}

func (p *hybrid) Name() string { return Hybrid }
func (p *hybrid) Len() int     { return p.embed.Len() + p.fallback.Len() }

func (p *hybrid) Push(it *Item) {
	if it.Kind == engine.KindEmbedding {
		p.embed.Push(it)
		return
	}
	p.fallback.Push(it)
}

// Pop returns embedding work first (it is short and batched), then LLM work
// in the fallback's order.
func (p *hybrid) Pop(now time.Time) *Item {
	if it := p.embed.Pop(now); it != nil {
		return it
	}
	return p.fallback.Pop(now)
}

// PopBatch returns up to max embedding items for one model, or a single LLM
// item when no embedding work is queued.
func (p *hybrid) PopBatch(now time.Time, max int) []*Item {
	if b := p.embed.PopBatch(now, max); b != nil {
		return b
	}
	if it := p.fallback.Pop(now); it != nil {
		return []*Item{it}
	}
	return nil
}
