package remote

import (
	"errors"
	"fmt"
)

// embedBody is what the gateway reads of an embeddings response.
type embedBody struct {
	data   []embedItem
	tokens int // usage.prompt_tokens
}

type embedItem struct {
	index int
	vec   []float32
	raw   []byte // the vector's JSON text (decodeEmbeddingsRaw)
}

// decodeEmbeddings parses an OpenAI embeddings response in one pass and
// without reflection: data[].index, data[].embedding (a list of numbers)
// and usage.prompt_tokens; other fields are skipped. The vectors are
// decoded into vals (reused scratch, returned grown) and then copied into
// one slab, so the whole answer costs two allocations. It never accepts
// what encoding/json would refuse or read differently: keys match
// case-insensitively as there, and a repeated key it acts on is an error.
// Like json.Decoder, it reads the first JSON value and ignores the rest.
func decodeEmbeddings(b []byte, vals []float32) (embedBody, []float32, error) {
	d := &embedDecoder{s: scanner{b: b}, vals: vals[:0]}
	if err := d.body(); err != nil {
		return embedBody{}, d.vals, fmt.Errorf("at byte %d: %w", d.s.i, err)
	}
	slab := make([]float32, len(d.vals))
	copy(slab, d.vals)
	for i, r := range d.ranges {
		if r[0] >= 0 {
			d.out.data[i].vec = slab[r[0]:r[1]:r[1]]
		}
	}
	return d.out, d.vals, nil
}

// decodeEmbeddingsRaw is decodeEmbeddings keeping each vector as its JSON
// text (copied out of b into one slab) instead of parsing its numbers: it
// checks their grammar and float32 range only, so it accepts exactly what
// decodeEmbeddings does.
func decodeEmbeddingsRaw(b []byte) (embedBody, error) {
	d := &embedDecoder{s: scanner{b: b}, raw: true}
	if err := d.body(); err != nil {
		return embedBody{}, fmt.Errorf("at byte %d: %w", d.s.i, err)
	}
	n := 0
	for _, r := range d.ranges {
		n += max(r[1]-r[0], 0)
	}
	slab := make([]byte, 0, n)
	for i, r := range d.ranges {
		if r[0] >= 0 {
			slab = append(slab, b[r[0]:r[1]]...)
			d.out.data[i].raw = slab[len(slab)-(r[1]-r[0]) : len(slab) : len(slab)]
		}
	}
	return d.out, nil
}

type embedDecoder struct {
	s      scanner
	raw    bool // keep vectors as text: ranges index s.b
	out    embedBody
	vals   []float32
	ranges [][2]int // each item's vector in vals (or s.b when raw)
}

// body reads {"data":[...],"usage":{...},...}.
func (d *embedDecoder) body() error {
	var seenData, seenUsage, seenTokens bool
	return d.s.object(func(key []byte) error {
		switch {
		case keyIs(key, "data"):
			if seenData {
				return errors.New(`repeated key "data"`)
			}
			seenData = true
			return d.s.array(d.item)
		case keyIs(key, "usage"):
			if seenUsage {
				return errors.New(`repeated key "usage"`)
			}
			seenUsage = true
			return d.s.object(func(key []byte) error {
				if !keyIs(key, "prompt_tokens") {
					return d.s.skip()
				}
				if seenTokens {
					return errors.New(`repeated key "prompt_tokens"`)
				}
				seenTokens = true
				n, err := d.s.int()
				d.out.tokens = n
				return err
			})
		}
		return d.s.skip()
	})
}

// item reads one {"index":N,"embedding":[...],...}; null is refused.
func (d *embedDecoder) item() error {
	var seenIndex, seenVec, null bool
	it := embedItem{}
	start := len(d.vals)
	end := -1
	err := d.s.object(func(key []byte) error {
		switch {
		case keyIs(key, "index"):
			if seenIndex {
				return errors.New(`repeated key "index"`)
			}
			seenIndex = true
			var err error
			it.index, err = d.s.int()
			return err
		case keyIs(key, "embedding"):
			if seenVec {
				return errors.New(`repeated key "embedding"`)
			}
			seenVec, null = true, d.s.peek() == 'n'
			if d.raw {
				start = d.s.i
				err := d.s.array(d.s.checkFloat32)
				end = d.s.i
				return err
			}
			return d.s.array(func() error {
				f, err := d.s.float32()
				d.vals = append(d.vals, f)
				return err
			})
		}
		return d.s.skip()
	})
	if err == nil && !seenVec {
		err = errors.New("data item without embedding")
	}
	d.out.data = append(d.out.data, it)
	r := [2]int{start, len(d.vals)}
	if d.raw {
		r = [2]int{start, end}
	}
	if null { // as encoding/json reads it: no vector
		r = [2]int{-1, -1}
	}
	d.ranges = append(d.ranges, r)
	return err
}
