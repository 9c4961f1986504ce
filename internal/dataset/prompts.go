package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Prompt dataset formats.
const (
	ShareGPT = "sharegpt"
	Prompts  = "prompts" // JSONL {"prompt": "…"}
)

// PromptFormats lists the formats ReadPrompts takes.
func PromptFormats() []string { return []string{ShareGPT, Prompts} }

// Turn is one exchange of a conversation: the user's text, its length,
// and the length of the reference answer (0: none in the dataset).
type Turn struct {
	Text          string
	Input, Output int
}

// Conversation is one dataset record: one turn (a prompt) or several
// (a ShareGPT conversation: each human message and the reply after it).
type Conversation struct {
	Turns []Turn
}

// MaxConversations bounds what ReadPrompts keeps (ShareGPT's V3 file has
// ~94,000); the rest of a larger file is not read.
const MaxConversations = 200_000

// ReadPrompts reads a prompt dataset, measuring every text with tok (on
// every core), and keeps its first MaxConversations usable ones. A
// ShareGPT conversation's turns start at its first human message
// (assistant messages before it are no answer); one whose first human
// message is empty, or that has none, is skipped, and empty human
// messages at its end are dropped. A malformed file is an *Error.
func ReadPrompts(path, format string, tok tokenizer.Tokenizer) ([]Conversation, error) {
	f, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParsePrompts(f, path, format, tok)
}

// ParsePrompts is ReadPrompts over r.
func ParsePrompts(r io.Reader, name, format string, tok tokenizer.Tokenizer) ([]Conversation, error) {
	var cs []Conversation
	var err error
	switch format {
	case ShareGPT:
		cs, err = parseShareGPT(r, name, tok, MaxConversations)
	case Prompts:
		cs, err = parseJSONLPrompts(r, name, tok, MaxConversations)
	default:
		return nil, fmt.Errorf("dataset format %q: use %s", format, strings.Join(PromptFormats(), ", "))
	}
	if err == nil && len(cs) == 0 {
		err = fmt.Errorf("%s: the dataset has no usable prompts", name)
	}
	return cs, err
}

type promptLine struct {
	Prompt       *string `json:"prompt"`
	OutputTokens int     `json:"output_tokens"`
}

func parseJSONLPrompts(r io.Reader, name string, tok tokenizer.Tokenizer, limit int) ([]Conversation, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var cs []Conversation
	var batch []pending
	line := 1
	for ; len(cs) < limit && sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var p promptLine
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, &Error{File: name, Line: line, Err: fmt.Errorf("not a JSON object like {\"prompt\": \"…\"}: %v", err)}
		}
		if p.Prompt == nil || *p.Prompt == "" {
			return nil, &Error{File: name, Line: line, Field: "prompt", Err: errors.New("missing or empty")}
		}
		if err := checkLength(p.OutputTokens, 0); err != nil {
			return nil, &Error{File: name, Line: line, Field: "output_tokens", Err: err}
		}
		batch = append(batch, pending{c: Conversation{Turns: []Turn{{Text: *p.Prompt, Output: p.OutputTokens}}}, replies: []string{""}})
		if len(batch) == measureBatch {
			cs, batch = measure(cs, batch, tok), batch[:0]
		}
	}
	if err := scanError(sc, name, line); err != nil {
		return nil, err
	}
	return firstN(measure(cs, batch, tok), limit), nil
}

// firstN is cs cut to its first n conversations: the last batch may
// carry usable ones past the limit.
func firstN(cs []Conversation, n int) []Conversation { return cs[:min(len(cs), n)] }

type shareGPTRecord struct {
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// parseShareGPT streams the JSON array: one conversation at a time.
func parseShareGPT(r io.Reader, name string, tok tokenizer.Tokenizer, limit int) ([]Conversation, error) {
	vb := newValueBound(r)
	lc := &lineCounter{r: vb}
	dec := json.NewDecoder(lc)
	bad := func(field string, err error) error {
		if errors.Is(err, errValueTooLong) { // the line where it passed the bound
			return &Error{File: name, Line: lc.line(vb.off - 1), Field: field, Err: errValueTooLong}
		}
		return &Error{File: name, Line: lc.line(dec.InputOffset()), Field: field, Err: err}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, bad("", errors.New("a ShareGPT file is a JSON array of {\"conversations\": [{\"from\", \"value\"}, …]}"))
	}
	var cs []Conversation
	var batch []pending
	for i := 0; len(cs) < limit && dec.More(); i++ {
		var rec shareGPTRecord
		vb.mark = dec.InputOffset()
		if err := dec.Decode(&rec); err != nil {
			return nil, bad(fmt.Sprintf("[%d]", i), err)
		}
		var p pending
		for k, m := range rec.Conversations {
			switch m.From {
			case "human", "user":
				p.c.Turns = append(p.c.Turns, Turn{Text: m.Value})
				p.replies = append(p.replies, "")
			case "gpt", "assistant", "chatgpt", "bard", "bing":
				if n := len(p.replies); n > 0 && p.replies[n-1] == "" { // the first answer (an empty one is none)
					p.replies[n-1] = m.Value
				}
			case "system":
			default:
				return nil, bad(fmt.Sprintf("[%d].conversations[%d].from", i, k), fmt.Errorf("%q is not human, gpt or system", m.From))
			}
		}
		if batch = append(batch, p); len(batch) == measureBatch {
			cs, batch = measure(cs, batch, tok), batch[:0]
		}
	}
	cs = measure(cs, batch, tok)
	if len(cs) < limit { // the array must end: More is false on a read error too
		vb.mark = dec.InputOffset()
		if t, err := dec.Token(); err != nil || t != json.Delim(']') {
			return nil, bad("", fmt.Errorf("the array does not end with ]: %w", err))
		}
	}
	return firstN(cs, limit), nil
}

// pending is a parsed conversation not measured yet, with the reference
// answer to each of its turns ("": none).
type pending struct {
	c       Conversation
	replies []string
}

// measureBatch is how many conversations are parsed before they are
// measured together (the answers' texts are kept only that long).
const measureBatch = 1024

// measure counts the turns' and answers' tokens of batch with tok on
// every core (a tokenization takes ~0.5 µs a token on one: a large
// ShareGPT file would take a minute), then appends to cs the usable
// conversations: trailing turns without text dropped, and a conversation
// whose first turn is empty skipped.
// A turn with an answer in the dataset gets its length as Output.
func measure(cs []Conversation, batch []pending, tok tokenizer.Tokenizer) []Conversation {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(batch)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(batch); i = int(next.Add(1) - 1) {
				p := &batch[i]
				for k := range p.c.Turns {
					p.c.Turns[k].Input = tok.Count(p.c.Turns[k].Text)
					if p.replies[k] != "" {
						p.c.Turns[k].Output = tok.Count(p.replies[k])
					}
				}
			}
		})
	}
	wg.Wait()
	for _, p := range batch {
		c := p.c
		for len(c.Turns) > 0 && c.Turns[len(c.Turns)-1].Input == 0 {
			c.Turns = c.Turns[:len(c.Turns)-1]
		}
		if len(c.Turns) > 0 && c.Turns[0].Input > 0 {
			cs = append(cs, c)
		}
	}
	return cs
}

// lineCounter counts the newlines read through it, so an offset into
// the stream can be named by its line. It keeps the offsets of the last
// newlines only (the decoder reports offsets close behind the read
// position), so a large file costs no memory per line.
type lineCounter struct {
	r        io.Reader
	off      int64
	dropped  int     // newlines before newlines[0]
	newlines []int64 // offsets of the most recent newlines
}

// keptNewlines bounds lineCounter.newlines.
const keptNewlines = 1 << 16

func (l *lineCounter) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i, c := range p[:n] {
		if c == '\n' {
			if len(l.newlines) == keptNewlines {
				half := keptNewlines / 2
				l.dropped += half
				l.newlines = append(l.newlines[:0], l.newlines[half:]...)
			}
			l.newlines = append(l.newlines, l.off+int64(i))
		}
	}
	l.off += int64(n)
	return n, err
}

// line is the 1-based line holding byte offset off.
func (l *lineCounter) line(off int64) int {
	n := 1 + l.dropped
	for _, nl := range l.newlines {
		if nl >= off {
			break
		}
		n++
	}
	return n
}
