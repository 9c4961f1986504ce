package openai

import (
	"encoding/json"
	"strconv"
)

// embedResponse is the answer to POST /v1/embeddings.
type embedResponse struct {
	Data  []embedDatum    `json:"data"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
	// The fast path's room for the usual answer (one datum, a usage),
	// so that decoding it allocates only the vector.
	one [1]embedDatum
	use usage
}

type embedDatum struct {
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

// decode fills r from data: the fast path when the answer is plainly in
// the usual shape, encoding/json otherwise (which has the final word).
func (r *embedResponse) decode(data []byte) error {
	if fastEmbed(data, r) {
		return nil
	}
	*r = embedResponse{}
	return json.Unmarshal(data, r)
}

// fastEmbed decodes the usual embeddings answer without reflection:
// data[].index (an integer), data[].embedding (an array of numbers),
// usage.prompt_tokens and the raw "error" value, skipping everything
// else. It returns false whenever the input is not plainly in that shape
// (null where an object or array is expected, a repeated key, a key
// encoding/json would match case-insensitively, an index that is not a
// plain integer, a number out of float32 range, invalid JSON …);
// FuzzEmbedResponse checks that whenever it accepts, encoding/json
// accepts too and decodes the same.
func fastEmbed(data []byte, r *embedResponse) bool {
	*r = embedResponse{}
	sc := scanner{b: data}
	seen := [3]bool{}
	once := func(k int) bool {
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}
	ok := sc.object(func(key []byte) bool {
		switch string(key) {
		case "data":
			return once(0) && sc.embedData(r)
		case "usage":
			return once(1) && sc.embedUsage(r)
		case "error":
			if !once(2) {
				return false
			}
			start := sc.i
			if !sc.skip() {
				return false
			}
			r.Error = json.RawMessage(data[start:sc.i])
			return true
		}
		return !foldsTo(key, "data", "usage", "error") && sc.skip()
	})
	sc.ws()
	return ok && sc.i == len(sc.b)
}

// embedData reads the data array: objects with index and embedding.
func (s *scanner) embedData(r *embedResponse) bool {
	r.Data = r.one[:0]
	return s.array(func() bool {
		var d embedDatum
		var seenIndex, seenVec bool
		ok := s.object(func(key []byte) bool {
			switch string(key) {
			case "index":
				if seenIndex {
					return false
				}
				seenIndex = true
				return s.integer(&d.Index)
			case "embedding":
				if seenVec {
					return false
				}
				seenVec = true
				return s.vector(&d.Embedding)
			}
			return !foldsTo(key, "index", "embedding") && s.skip()
		})
		r.Data = append(r.Data, d)
		return ok
	})
}

// vector reads an array of numbers as float32s, as encoding/json does
// (strconv.ParseFloat with 32 bits; out of range is not the fast path's
// to judge).
func (s *scanner) vector(v *[]float32) bool {
	*v = make([]float32, 0, 16)
	return s.array(func() bool {
		raw, ok := s.number()
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(raw), 32)
		*v = append(*v, float32(f))
		return err == nil
	})
}

// integer reads a plain integer literal into an int.
func (s *scanner) integer(dst *int) bool {
	raw, ok := s.number()
	if !ok {
		return false
	}
	n, err := strconv.Atoi(string(raw))
	*dst = n
	return err == nil
}

// embedUsage reads usage (null, or an object whose prompt_tokens and
// completion_tokens it keeps).
func (s *scanner) embedUsage(r *embedResponse) bool {
	if s.lit("null") { // as encoding/json: a nil *usage
		return true
	}
	r.Usage = &r.use
	var seen [2]bool
	return s.object(func(key []byte) bool {
		k, dst := 0, &r.Usage.PromptTokens
		switch string(key) {
		case "prompt_tokens":
		case "completion_tokens":
			k, dst = 1, &r.Usage.CompletionTokens
		default:
			return !foldsTo(key, "prompt_tokens", "completion_tokens") && s.skip()
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		return s.integer(dst)
	})
}
