package engine

import (
	"context"
	"errors"
	"fmt"
)

// Kind says what an engine serves.
type Kind string

// Engine kinds.
const (
	KindLLM       Kind = "llm"
	KindEmbedding Kind = "embedding"
)

// ErrOverloaded is returned when an engine cannot admit more work (its
// waiting queue is full). The gateway may route elsewhere or retry.
var ErrOverloaded = errors.New("engine overloaded")

// ErrClosed is returned by an engine that has been closed or killed.
var ErrClosed = errors.New("engine closed")

// ErrTooLarge is returned when a request can never fit the engine,
// however idle (its KV reservation exceeds the whole KV budget). It is the
// client's error and says nothing about the engine's health; an engine
// with a bigger budget may still take the request.
var ErrTooLarge = errors.New("request too large for the engine")

// TooLargeError is ErrTooLarge with the sizes: what the request needs and
// what the engine has, in KV-cache tokens.
type TooLargeError struct {
	Engine         string
	Need, Capacity int
	Detail         string // e.g. "prompt 9000 + max_tokens 256"
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("request needs %d KV-cache tokens (%s), engine %s has %d in all",
		e.Need, e.Detail, e.Engine, e.Capacity)
}

// Is makes errors.Is(err, ErrTooLarge) hold.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// ChatRequest is one generation request as an engine sees it.
type ChatRequest struct {
	ID        string
	Model     string
	Prompt    string // the rendered conversation
	MaxTokens int    // > 0; the engine stops at this many output tokens
	// Messages are the conversation as sent: a remote engine forwards
	// them, a simulated one counts and caches by their tokens.
	Messages []Message
}

// Message is one message of a conversation.
type Message struct {
	Role, Content string
}

// Token is one generated token.
type Token struct {
	Index int
	Text  string
}

// Usage counts tokens of a finished request.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int // prompt tokens served from the prefix cache
}

// Stream delivers the tokens of one generation.
//
// Recv blocks until the next token is available and returns it; after the
// last token it returns io.EOF. It returns ctx.Err() when ctx is done, and
// another error if the engine failed the request (ErrClosed when it died).
// Usage is valid after Recv returned io.EOF. Close releases the request's
// slot in the engine (cancelling generation if it is still running); it is
// safe to call more than once and must be called by the consumer.
type Stream interface {
	Recv(ctx context.Context) (Token, error)
	Usage() Usage
	Close()
}

// Load is a snapshot of an engine's occupancy, for load-aware routing.
type Load struct {
	Running    int // sequences in the running batch (or in-flight requests)
	Waiting    int // queued inside the engine
	Slots      int // max_num_seqs / max batch: the engine's concurrency
	KVUsed     int // KV-cache tokens in use (0 when unknown)
	KVCapacity int // KV-cache token budget (0 when unknown)
}

// LLM is a text-generation engine.
type LLM interface {
	ID() string
	Model() string
	// Generate admits req and returns its stream. It does not block on
	// generation; the returned Stream yields tokens as they are produced.
	Generate(ctx context.Context, req ChatRequest) (Stream, error)
	// Load reports the engine's occupancy. It must not block: the gateway
	// calls it while holding its pool lock to decide where work goes.
	Load() Load
}

// Embedder is an embedding engine.
type Embedder interface {
	ID() string
	Model() string
	// Embed returns one vector per input, in order, blocking until the
	// batch that carries them has run or ctx is done.
	Embed(ctx context.Context, inputs []string) ([][]float32, Usage, error)
	// Load reports the engine's occupancy. It must not block: the gateway
	// calls it while holding its pool lock.
	Load() Load
}
