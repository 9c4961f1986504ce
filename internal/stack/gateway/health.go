package gateway

import (
	"context"
	"errors"
	"io"
	"time"
)

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// healthLoop probes ejected engines (re-admitting them when healthy) and
// engines that can report health cheaply (ejecting them when not).
func (g *Gateway) healthLoop() {
	defer g.wg.Done()
	t := time.NewTicker(g.cfg.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			g.checkAll()
		}
	}
}

func (g *Gateway) checkAll() {
	for _, p := range g.pools {
		p.mu.Lock()
		var todo []*entry
		for _, m := range p.members {
			if m.state == stateEjected || (m.state == stateActive && m.checker() != nil) {
				todo = append(todo, m)
			}
		}
		p.mu.Unlock()
		for _, m := range todo {
			g.check(p, m)
		}
	}
}

func (g *Gateway) check(p *pool, m *entry) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout(g.cfg.HealthInterval))
	defer cancel()
	go func() { // stop the probe when the gateway closes
		select {
		case <-g.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := m.probe(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil:
		m.probeFails = 0
		if m.state == stateEjected {
			m.state, m.errs = stateActive, 0
			g.cfg.Logger.Info("engine re-admitted", "engine", m.id)
			p.dispatchLocked()
		}
	case m.state == stateActive:
		// A busy engine may answer a probe late once; eject after
		// EjectAfter failed probes in a row (requests that fail or stall
		// eject it sooner).
		m.probeFails++
		if m.probeFails >= g.cfg.EjectAfter {
			g.ejectLocked(m, err)
			p.dispatchLocked()
		}
	}
}

func probeTimeout(interval time.Duration) time.Duration {
	return max(2*time.Second, interval)
}

// checker returns m's engine as a Checker, or nil.
func (m *entry) checker() Checker {
	if m.eng.LLM != nil {
		c, _ := m.eng.LLM.(Checker)
		return c
	}
	c, _ := m.eng.Embedder.(Checker)
	return c
}
