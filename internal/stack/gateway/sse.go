package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/stack/engine"
)

// streamChat writes the generation as OpenAI chat.completion.chunk events,
// one per token, flushing each. It returns the engine's error if the stream
// failed (sent to the client as an SSE error event) or nil.
func (g *Gateway) streamChat(w http.ResponseWriter, ctx context.Context, gen *generation, creq engine.ChatRequest, includeUsage bool, c *call) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Trailer", protocol.HeaderServerTiming)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	enc := newChunkEncoder(creq.ID, creq.Model, g.now().Unix())
	buf := make([]byte, 0, 512)
	send := func(b []byte) bool {
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	var first time.Duration // when the first token left, from receipt
	if !gen.eof {
		if !send(enc.token(buf[:0], gen.first.Text, true)) {
			c.status = 499
			return nil
		}
		first = time.Since(c.start)
		for {
			tok, err := gen.st.Recv(gen.wd.ctx)
			if isEOF(err) {
				break
			}
			if err != nil {
				err = gen.wd.explain(err)
				if ctx.Err() != nil {
					c.status = 499
					return err
				}
				c.status = http.StatusBadGateway
				send(sseError(engineFailed(gen.m.id, err)))
				return err
			}
			gen.wd.kick()
			if !send(enc.token(buf[:0], tok.Text, false)) {
				c.status = 499
				return nil
			}
		}
	}
	u := gen.st.Usage()
	b := enc.finish(buf[:0], finishReason(u.CompletionTokens, creq.MaxTokens))
	if includeUsage {
		b = enc.usage(b, u)
	}
	b = append(b, "data: [DONE]\n\n"...)
	if !send(b) {
		c.status = 499
	}
	c.answered(h, first) // a trailer: sent after the last chunk
	return nil
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
