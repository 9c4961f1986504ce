package gateway

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// Member is one engine handed to the gateway: exactly one of LLM and
// Embedder is set.
type Member struct {
	LLM      engine.LLM
	Embedder engine.Embedder
	// Speed is the expected time per output token (LLM) or per request
	// (embedder), used to rank engines for urgent work; 0 = unknown
	// (observed latency takes over after the first requests).
	Speed time.Duration
	// Close releases the engine when it is removed or the gateway closes;
	// nil when the gateway does not own it.
	Close func() error
	// Profile and URL describe where it came from, for /admin/engines.
	Profile string
	URL     string
}

// Checker is implemented by engines that can report their health cheaply
// (remote engines: GET /health). Others are probed with a tiny request.
type Checker interface {
	Health(ctx context.Context) error
}

type engineState int

const (
	stateActive engineState = iota
	stateDraining
	stateDrained
	stateEjected
	stateRemoved
)

func (s engineState) String() string {
	return [...]string{"active", "draining", "drained", "ejected", "removed"}[s]
}

// entry is an engine inside a pool. Its mutable fields are guarded by
// the pool's mutex.
type entry struct {
	id         string
	kind       engine.Kind
	model      string
	eng        Member
	state      engineState
	running    int
	errs       int           // consecutive failures
	probeFails int           // consecutive failed health probes while active
	speed      time.Duration // EWMA of observed speed, seeded by eng.Speed
	idle       chan struct{} // closed when draining and running reaches 0
	served     int64
	failed     int64
	progress   atomic.Int64 // unix ns of the engine's last token or result
}

func (m *entry) load() engine.Load {
	if m.eng.LLM != nil {
		return m.eng.LLM.Load()
	}
	return m.eng.Embedder.Load()
}

// slots is how many requests the gateway keeps in flight on the engine:
// its Load().Slots (unknown counts as 64). An embedder gets twice its batch
// size, so the next batch fills while one runs instead of the engine idling
// between batches.
func (m *entry) slots() int {
	s := m.load().Slots
	if s <= 0 {
		s = 64
	}
	if m.kind == engine.KindEmbedding {
		s *= 2
	}
	return s
}

func (m *entry) free() bool { return m.state == stateActive && m.running < m.slots() }

// observe folds one observed speed sample into the EWMA.
func (m *entry) observe(d time.Duration) {
	if d <= 0 {
		return
	}
	if m.speed == 0 {
		m.speed = d
		return
	}
	m.speed = (m.speed*7 + d) / 8
}

// probe checks an engine with Health when it has one, else a tiny request.
func (m *entry) probe(ctx context.Context) error {
	if c := m.checker(); c != nil {
		return c.Health(ctx)
	}
	if m.eng.Embedder != nil {
		_, _, err := m.eng.Embedder.Embed(ctx, []string{"health"})
		return err
	}
	st, err := m.eng.LLM.Generate(ctx, engine.ChatRequest{ID: "health-" + m.id, Model: m.model, Prompt: "health", MaxTokens: 1})
	if err != nil {
		return err
	}
	defer st.Close()
	for {
		if _, err := st.Recv(ctx); err != nil {
			if isEOF(err) {
				return nil
			}
			return err
		}
	}
}

// isClientGone reports errors caused by the caller, not the engine.
func isClientGone(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
