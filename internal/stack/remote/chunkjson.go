package remote

import (
	"errors"
	"fmt"
)

// decodeChunk parses one chat.completion.chunk in one pass without
// reflection into what the gateway reads of it (see chunk); other fields
// are skipped. As decodeEmbeddings, it never accepts what json.Unmarshal
// into a chunk would refuse or read differently: keys match
// case-insensitively, a repeated key it acts on is an error, and nothing
// but white space may follow the object.
func decodeChunk(b []byte) (chunk, error) {
	d := &chunkDecoder{s: scanner{b: b}}
	err := d.s.object(d.field)
	if d.s.ws(); err == nil && d.s.i != len(d.s.b) {
		err = errors.New("data after the JSON object")
	}
	if err != nil {
		return chunk{}, fmt.Errorf("at byte %d: %w", d.s.i, err)
	}
	return d.c, nil
}

type chunkDecoder struct {
	s    scanner
	c    chunk
	seen seenKeys
}

// seenKeys refuses a key twice in one object: one bit per key the
// decoder acts on, no allocation.
type seenKeys uint16

const (
	keyChoices seenKeys = 1 << iota
	keyUsage
	keyError
	keyMessage
	keyDelta
	keyContent
	keyPromptTokens
	keyCompletionTokens
	keyPromptTokensDetails
	keyCachedTokens
)

func (k *seenKeys) once(bit seenKeys, name string) error {
	if *k&bit != 0 {
		return fmt.Errorf("repeated key %q", name)
	}
	*k |= bit
	return nil
}

func (d *chunkDecoder) field(key []byte) error {
	switch {
	case keyIs(key, "choices"):
		if err := d.seen.once(keyChoices, "choices"); err != nil {
			return err
		}
		if d.s.peek() == '[' {
			d.c.Choices = []chunkChoice{}
		}
		return d.s.array(d.choice)
	case keyIs(key, "usage"):
		if err := d.seen.once(keyUsage, "usage"); err != nil {
			return err
		}
		return d.usage()
	case keyIs(key, "error"):
		if err := d.seen.once(keyError, "error"); err != nil {
			return err
		}
		if d.s.peek() == '{' {
			d.c.Error = &chunkError{}
		}
		var seen seenKeys
		return d.s.object(func(key []byte) error {
			if !keyIs(key, "message") {
				return d.s.skip()
			}
			if err := seen.once(keyMessage, "message"); err != nil {
				return err
			}
			var err error
			d.c.Error.Message, err = d.s.string()
			return err
		})
	}
	return d.s.skip()
}

// choice reads one {"delta":{"content":"..."},...}; null is a zero choice.
func (d *chunkDecoder) choice() error {
	d.c.Choices = append(d.c.Choices, chunkChoice{})
	ch := &d.c.Choices[len(d.c.Choices)-1]
	var seen seenKeys
	return d.s.object(func(key []byte) error {
		if !keyIs(key, "delta") {
			return d.s.skip()
		}
		if err := seen.once(keyDelta, "delta"); err != nil {
			return err
		}
		var seenContent seenKeys
		return d.s.object(func(key []byte) error {
			if !keyIs(key, "content") {
				return d.s.skip()
			}
			if err := seenContent.once(keyContent, "content"); err != nil {
				return err
			}
			var err error
			ch.Delta.Content, err = d.s.string()
			return err
		})
	})
}

func (d *chunkDecoder) usage() error {
	if d.s.peek() == '{' {
		d.c.Usage = &chunkUsage{}
	}
	var seen seenKeys
	return d.s.object(func(key []byte) error {
		u := d.c.Usage
		switch {
		case keyIs(key, "prompt_tokens"):
			return intField(&d.s, &seen, keyPromptTokens, "prompt_tokens", &u.PromptTokens)
		case keyIs(key, "completion_tokens"):
			return intField(&d.s, &seen, keyCompletionTokens, "completion_tokens", &u.CompletionTokens)
		case keyIs(key, "prompt_tokens_details"):
			if err := seen.once(keyPromptTokensDetails, "prompt_tokens_details"); err != nil {
				return err
			}
			if d.s.peek() == '{' {
				u.PromptTokensDetails = &chunkDetails{}
			}
			var seenCached seenKeys
			return d.s.object(func(key []byte) error {
				if !keyIs(key, "cached_tokens") {
					return d.s.skip()
				}
				return intField(&d.s, &seenCached, keyCachedTokens, "cached_tokens", &u.PromptTokensDetails.CachedTokens)
			})
		}
		return d.s.skip()
	})
}

// intField reads an integer field (null leaves it as it is, as
// encoding/json does), once.
func intField(s *scanner, seen *seenKeys, bit seenKeys, name string, v *int) error {
	if err := seen.once(bit, name); err != nil {
		return err
	}
	if s.peek() == 'n' {
		return s.lit("null")
	}
	n, err := s.int()
	*v = n
	return err
}
