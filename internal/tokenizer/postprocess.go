package tokenizer

import (
	"encoding/json"
	"fmt"
)

// postProcessor is what a tokenizer.json's post_processor adds around a
// single sequence when the text is encoded with add_special_tokens=True
// (BERT's [CLS] … [SEP], RoBERTa's <s> … </s>, Llama 3's
// <|begin_of_text|> …): the IDs before the text's and after them.
type postProcessor struct {
	prefix, suffix []int
}

// hfPost is a post_processor node of a tokenizer.json.
type hfPost struct {
	Type       string          `json:"type"`
	Processors []hfPost        `json:"processors"`
	Single     []hfPiece       `json:"single"`
	Special    json.RawMessage `json:"special_tokens"`
	Sep        json.RawMessage `json:"sep"`
	Cls        json.RawMessage `json:"cls"`
}

// hfPiece is one element of TemplateProcessing's single template: a
// special token (by its special_tokens key) or the sequence itself.
type hfPiece struct {
	SpecialToken *struct {
		ID string `json:"id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID string `json:"id"`
	} `json:"Sequence"`
}

// newPostProcessor reads a post_processor: TemplateProcessing,
// BertProcessing, RobertaProcessing, ByteLevel (which adds nothing) and
// a Sequence of ByteLevels and at most one of the others (Llama 3's
// ByteLevel + TemplateProcessing).
func newPostProcessor(file string, c *hfPost) (postProcessor, error) {
	var p postProcessor
	if c == nil {
		return p, nil
	}
	switch c.Type {
	case "ByteLevel":
		return p, nil
	case "Sequence":
		return sequence(file, c)
	case "BertProcessing", "RobertaProcessing":
		cls, err := pairID(file, c.Type, "cls", c.Cls)
		if err != nil {
			return p, err
		}
		sep, err := pairID(file, c.Type, "sep", c.Sep)
		if err != nil {
			return p, err
		}
		return postProcessor{prefix: []int{cls}, suffix: []int{sep}}, nil
	case "TemplateProcessing":
		return templateProcessing(file, c)
	}
	return p, &UnsupportedError{File: file, What: fmt.Sprintf("post_processor %q", c.Type)}
}

// sequence reads a Sequence of post-processors of which at most one adds
// tokens. tokenizers hands a TemplateProcessing's output to the next
// processor as one encoding per piece of its template, so a second one
// would see a pair (TestPostProcessorRefused): that is refused.
func sequence(file string, c *hfPost) (postProcessor, error) {
	var p postProcessor
	adders := 0
	for i := range c.Processors {
		q, err := newPostProcessor(file, &c.Processors[i])
		if err != nil {
			return p, err
		}
		if c.Processors[i].Type != "ByteLevel" {
			if adders++; adders > 1 {
				return p, &UnsupportedError{File: file, What: "a Sequence post_processor with more than one processor that adds tokens"}
			}
			p = q
		}
	}
	return p, nil
}

// pairID is the ID of BertProcessing's or RobertaProcessing's
// ["[CLS]", 101].
func pairID(file, typ, field string, raw json.RawMessage) (int, error) {
	var pair []json.RawMessage
	var id int
	if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 || json.Unmarshal(pair[1], &id) != nil {
		return 0, &UnsupportedError{File: file, What: fmt.Sprintf("a %s whose %s is not [token, id]", typ, field)}
	}
	return id, nil
}

// templateProcessing reads the single template: the special tokens
// before the sequence $A are the prefix, those after it the suffix.
func templateProcessing(file string, c *hfPost) (postProcessor, error) {
	var p postProcessor
	var special map[string]struct {
		IDs []int `json:"ids"`
	}
	if len(c.Special) > 0 && string(c.Special) != "null" {
		if err := json.Unmarshal(c.Special, &special); err != nil {
			return p, &UnsupportedError{File: file, What: "a TemplateProcessing whose special_tokens are not {name: {ids}}"}
		}
	}
	seen := false
	for _, piece := range c.Single {
		switch {
		case piece.Sequence != nil:
			if seen || piece.Sequence.ID != "A" {
				return p, &UnsupportedError{File: file, What: "a TemplateProcessing single template that is not one $A between special tokens"}
			}
			seen = true
		case piece.SpecialToken != nil:
			tok, ok := special[piece.SpecialToken.ID]
			if !ok {
				return p, &UnsupportedError{File: file, What: fmt.Sprintf("a TemplateProcessing naming the undefined special token %q", piece.SpecialToken.ID)}
			}
			if seen {
				p.suffix = append(p.suffix, tok.IDs...)
			} else {
				p.prefix = append(p.prefix, tok.IDs...)
			}
		}
	}
	if !seen {
		return p, &UnsupportedError{File: file, What: "a TemplateProcessing single template without $A"}
	}
	return p, nil
}

// EncodeWithSpecialTokens returns the IDs of text with the special tokens
// the tokenizer.json's post-processor adds around a single sequence
// (Hugging Face's encode(text, add_special_tokens=True)): what an
// embedding server (HF TEI, vLLM) counts as an input's prompt_tokens.
func (t *HF) EncodeWithSpecialTokens(text string) []int {
	ids := t.Encode(text)
	if len(t.post.prefix)+len(t.post.suffix) == 0 {
		return ids
	}
	out := make([]int, 0, len(t.post.prefix)+len(ids)+len(t.post.suffix))
	out = append(append(append(out, t.post.prefix...), ids...), t.post.suffix...)
	return out
}

// CountWithSpecialTokens is len(EncodeWithSpecialTokens(text)).
func (t *HF) CountWithSpecialTokens(text string) int {
	return len(t.post.prefix) + t.Count(text) + len(t.post.suffix)
}

// specialCounter is a tokenizer that adds special tokens around an input
// encoded for a server's count (a tokenizer.json's post-processor).
type specialCounter interface {
	CountWithSpecialTokens(text string) int
}

// CountWithSpecialTokens is the length of text as a server counts one
// input of an embedding request, add_special_tokens=True: with the
// special tokens the tokenizer's post-processor adds (BERT's [CLS] and
// [SEP]: 2 more than Count). An embedded vocabulary adds none.
//
// Chat prompts are counted with Count, not this: transformers'
// apply_chat_template(tokenize=True) and vLLM's chat endpoint tokenize
// the rendered prompt with add_special_tokens=False (the template writes
// the BOS itself), so Llama 3's <|begin_of_text|> is counted once.
func CountWithSpecialTokens(t Tokenizer, text string) int {
	if s, ok := t.(specialCounter); ok {
		return s.CountWithSpecialTokens(text)
	}
	return t.Count(text)
}
