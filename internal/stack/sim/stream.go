package sim

import (
	"context"
	"sync"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// stream is the consumer side of one request. The loop only counts
// produced tokens under mu and pokes notify (capacity 1, never blocking);
// Recv derives each token's text from its index, so a stream holds no
// token buffer however slow its consumer is.
type stream struct {
	e      *LLM
	r      *request
	seed   uint64
	prompt int
	notify chan struct{}

	mu       sync.Mutex
	produced int
	next     int
	cached   int
	err      error // terminal: io.EOF when complete
	closed   bool
}

var _ engine.Stream = (*stream)(nil)

func (s *stream) poke() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *stream) push() {
	s.mu.Lock()
	s.produced++
	s.mu.Unlock()
	s.poke()
}

func (s *stream) finish(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.poke()
}

func (s *stream) setCached(n int) {
	s.mu.Lock()
	s.cached = n
	s.mu.Unlock()
}

// Recv returns the next token, io.EOF after the last one, ctx.Err() when
// ctx is done, and engine.ErrClosed when the engine died first. Tokens
// already produced are delivered before a failure is reported.
func (s *stream) Recv(ctx context.Context) (engine.Token, error) {
	for {
		if tok, ok, err := s.TryRecv(); ok {
			return tok, err
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return engine.Token{}, ctx.Err()
		case <-s.e.done:
			s.finish(engine.ErrClosed)
		}
	}
}

// TryRecv is Recv without waiting: ok is false when nothing is ready yet
// (Recv would block). A token already produced, or the stream's end
// (io.EOF, a failure), is returned with ok true. The gateway drains what
// is ready with it to write tokens of the same instant in one flush.
func (s *stream) TryRecv() (engine.Token, bool, error) {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return engine.Token{}, true, errStreamClosed
	case s.next < s.produced:
		i := s.next
		s.next++
		s.mu.Unlock()
		return engine.Token{Index: i, Text: tokenText(s.seed, i)}, true, nil
	case s.err != nil:
		err := s.err
		s.mu.Unlock()
		return engine.Token{}, true, err
	}
	s.mu.Unlock()
	return engine.Token{}, false, nil
}

// Usage counts the prompt, the tokens produced so far (all of them after
// io.EOF) and the prompt tokens served from the prefix cache.
func (s *stream) Usage() engine.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return engine.Usage{PromptTokens: s.prompt, CompletionTokens: s.produced, CachedTokens: s.cached}
}

// Close releases the request's slot and KV if it is still in the engine.
func (s *stream) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	live := s.err == nil
	s.mu.Unlock()
	if live {
		_ = s.e.post(func() { s.e.cancel(s.r) })
	}
}
