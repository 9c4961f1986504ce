package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/stack/engine"
)

// readyStream is a stream that can hand over what is already available
// without waiting (sim streams): TryRecv's ok is false when Recv would
// block; a ready token or end (io.EOF, a failure) comes with ok true.
type readyStream interface {
	TryRecv() (tok engine.Token, ok bool, err error)
}

// maxCoalesce bounds the bytes of ready tokens written at once.
const maxCoalesce = 16 << 10

// streamChat writes the generation as OpenAI chat.completion.chunk events,
// one per token. Writes follow the engine's token boundaries: each time
// the writer gets to the stream it encodes every token already available
// (the engine emitted them at the same instant, or before the writer came
// back), and the stream's end if it is ready too, into one buffer, then
// writes and flushes it once. It never waits for a token while holding
// another. It returns the engine's error if the stream failed (sent to the
// client as an SSE error event) or nil.
func (g *Gateway) streamChat(w http.ResponseWriter, ctx context.Context, gen *generation, creq engine.ChatRequest, includeUsage bool, c *call) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Trailer", protocol.HeaderServerTiming)
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w), start: c.start, buf: make([]byte, 0, 1024),
		enc: newChunkEncoder(creq.ID, creq.Model, g.now().Unix()), writes: g.met.sseWrites}
	end := error(io.EOF)
	if !gen.eof {
		s.token(gen.first.Text, true)
		end = s.relay(gen)
	}
	if s.failed { // the client stopped reading: nobody to tell
		c.status = 499
		return nil
	}
	if !isEOF(end) {
		end = gen.wd.explain(end)
		if ctx.Err() != nil {
			c.status = 499
			return end
		}
		c.status = http.StatusBadGateway
		s.buf = append(s.buf, sseError(engineFailed(gen.m.id, end))...)
		s.flush()
		return end
	}
	u := gen.st.Usage()
	s.buf = s.enc.finish(s.buf, finishReason(u.CompletionTokens, creq.MaxTokens))
	if includeUsage {
		s.buf = s.enc.usage(s.buf, u)
	}
	s.buf = append(s.buf, "data: [DONE]\n\n"...)
	if !s.flush() {
		c.status = 499
	}
	c.answered(h, s.first) // a trailer: sent after the last chunk
	return nil
}

// relay writes the tokens after the first, flushing at each token
// boundary the engine's stream shows, and returns how the stream ended
// (io.EOF or the engine's error) with the last tokens still in s.buf, or
// errClientGone when a write failed (s.failed).
func (s *sseWriter) relay(gen *generation) error {
	ready, _ := gen.st.(readyStream)
	for {
		for ready != nil && len(s.buf) < maxCoalesce { // the tokens due now
			tok, ok, err := ready.TryRecv()
			if !ok {
				break
			}
			if err != nil {
				return err
			}
			gen.wd.kick()
			s.token(tok.Text, false)
		}
		if !s.flush() {
			return errClientGone
		}
		tok, err := gen.st.Recv(gen.wd.ctx)
		if err != nil {
			return err
		}
		gen.wd.kick()
		s.token(tok.Text, false)
	}
}

// errClientGone ends a stream whose client stopped reading.
const errClientGone = gatewayError("client stopped reading the stream")

// sseWriter holds the encoded events not yet written and when the first
// token left.
type sseWriter struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	enc    *chunkEncoder
	buf    []byte
	writes prometheus.Counter
	start  time.Time
	first  time.Duration // when the first token left, from receipt; 0 before
	tokens bool          // buf holds a token
	failed bool          // a write failed: the client is gone
}

func (s *sseWriter) token(text string, first bool) {
	s.buf = s.enc.token(s.buf, text, first)
	s.tokens = true
}

// flush writes and flushes buf, once; false when the client is gone.
func (s *sseWriter) flush() bool {
	if s.failed {
		return false
	}
	if len(s.buf) > 0 {
		if _, err := s.w.Write(s.buf); err != nil || s.rc.Flush() != nil {
			s.failed = true
			return false
		}
		s.writes.Inc()
	}
	if s.tokens && s.first == 0 {
		s.first = time.Since(s.start)
	}
	s.buf, s.tokens = s.buf[:0], false
	return true
}

func sseError(e *apiError) []byte {
	body, _ := json.Marshal(e.body())
	out := append([]byte("event: error\ndata: "), body...)
	return append(out, "\n\n"...)
}

// chunkEncoder builds chunk events without reflection: a fixed prefix per
// stream and the token's JSON string.
type chunkEncoder struct {
	head []byte // data: {"id":...,"model":...,"choices":
}

func newChunkEncoder(id, model string, created int64) *chunkEncoder {
	b := []byte(`data: {"id":`)
	b = appendJSONString(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, model)
	b = append(b, `,"choices":`...)
	return &chunkEncoder{head: b}
}

func (e *chunkEncoder) token(b []byte, text string, first bool) []byte {
	b = append(b, e.head...)
	if first {
		b = append(b, `[{"index":0,"delta":{"role":"assistant","content":`...)
	} else {
		b = append(b, `[{"index":0,"delta":{"content":`...)
	}
	b = appendJSONString(b, text)
	return append(b, "},\"finish_reason\":null}]}\n\n"...)
}

func (e *chunkEncoder) finish(b []byte, reason string) []byte {
	b = append(b, e.head...)
	b = append(b, `[{"index":0,"delta":{},"finish_reason":"`...)
	b = append(b, reason...)
	return append(b, "\"}]}\n\n"...)
}

func (e *chunkEncoder) usage(b []byte, u engine.Usage) []byte {
	b = append(b, e.head...)
	b = append(b, `[],"usage":`...)
	body, _ := json.Marshal(usageOf(u))
	b = append(b, body...)
	return append(b, "}\n\n"...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaping what JSON requires
// and replacing invalid UTF-8 with U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
