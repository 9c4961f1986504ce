package tokenizer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// maxHFBytes bounds a tokenizer.json (Llama 3's is 9 MB, Qwen 3's 11 MB).
const maxHFBytes = 64 << 20

// HF is a Hugging Face tokenizer.json: its normalizers, its
// pre-tokenizers (Split, ByteLevel, Metaspace, BertPreTokenizer,
// WhitespaceSplit, in a Sequence), its model — BPE (byte-level, or
// SentencePiece-style with byte fallback), WordPiece or Unigram — and the
// added tokens, which are matched in the text before anything else.
// Encode and Count are of the text alone (add_special_tokens=False, as a
// chat server tokenizes a rendered prompt); EncodeWithSpecialTokens adds
// what the post-processor adds (BERT's [CLS] and [SEP]), as an embedding
// server counts an input. The decoder plays no part.
type HF struct {
	core
	post postProcessor
	sum  string // SHA-256 of the tokenizer.json (Fingerprint)
}

var _ Tokenizer = (*HF)(nil)

// core is what both kinds share: added tokens, normalizers,
// pre-tokenizers and a word encoder, with a bounded memo of encoded
// pre-tokens (prompts repeat words).
type core struct {
	name  string
	norm  []normalizeFunc
	pre   []preStep
	word  func(piece string) []int
	added addedTokens
	mu    sync.Mutex
	memo  map[string][]int
}

// maxMemo bounds the per-pre-token memo; it is emptied when full.
const maxMemo = 1 << 16

// UnsupportedError names what a tokenizer.json uses that HF cannot
// reproduce faithfully.
type UnsupportedError struct {
	File, What string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s: %s is not supported; sagebench loads BPE (byte-level or with byte fallback), WordPiece and Unigram tokenizer.json files — use %s or %s otherwise",
		e.File, e.What, CL100K, O200K)
}

type hfFile struct {
	AddedTokens  []hfAdded    `json:"added_tokens"`
	Normalizer   *hfComponent `json:"normalizer"`
	PreTokenizer *hfComponent `json:"pre_tokenizer"`
	Model        hfModel      `json:"model"`
	PostProc     *hfPost      `json:"post_processor"`
}

type hfAdded struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
}

// hfComponent is a normalizer or pre-tokenizer node.
type hfComponent struct {
	Type           string            `json:"type"`
	Normalizers    []hfComponent     `json:"normalizers"`
	Pretokenizers  []hfComponent     `json:"pretokenizers"`
	Pattern        map[string]string `json:"pattern"`
	Behavior       string            `json:"behavior"`
	Invert         bool              `json:"invert"`
	AddPrefixSpace bool              `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
	// Normalizers' options.
	Left               bool   `json:"strip_left"` // Strip's (tokenizers serializes strip_left, strip_right)
	Right              bool   `json:"strip_right"`
	Prepend            string `json:"prepend"`
	Content            string `json:"content"`
	CleanText          *bool  `json:"clean_text"`
	HandleChineseChars *bool  `json:"handle_chinese_chars"`
	StripAccents       *bool  `json:"strip_accents"`
	Lowercase          *bool  `json:"lowercase"`
	// Precompiled's SentencePiece charsmap, base64.
	PrecompiledCharsmap string `json:"precompiled_charsmap"`
	// Metaspace's.
	Replacement   string `json:"replacement"`
	PrependScheme string `json:"prepend_scheme"`
	Split         *bool  `json:"split"`
}

type hfModel struct {
	Type string `json:"type"`
	// Vocab is {token: id} (BPE, WordPiece) or [[token, score], …]
	// (Unigram).
	Vocab        json.RawMessage `json:"vocab"`
	Merges       json.RawMessage `json:"merges"`
	IgnoreMerges bool            `json:"ignore_merges"`
	ByteFallback bool            `json:"byte_fallback"`
	FuseUnk      bool            `json:"fuse_unk"`
	UnkToken     *string         `json:"unk_token"`
	UnkID        *int            `json:"unk_id"`
	Prefix       *string         `json:"continuing_subword_prefix"`
	Suffix       *string         `json:"end_of_word_suffix"`
	Dropout      *float64        `json:"dropout"`
	MaxChars     *int            `json:"max_input_chars_per_word"`
}

// LoadHF reads a Hugging Face tokenizer.json of the byte-level BPE family.
// Anything else is an *UnsupportedError naming the component.
func LoadHF(path string) (*HF, error) {
	b, err := readHF(path)
	if err != nil {
		return nil, err
	}
	return ParseHF(filepath.Base(path), b)
}

// readHF reads a tokenizer.json, refusing one past maxHFBytes.
func readHF(path string) ([]byte, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() { // a FIFO would block the open
		return nil, fmt.Errorf("tokenizer %s: not a regular file; give the path of a tokenizer.json", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHFBytes+1))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	if len(b) > maxHFBytes {
		return nil, fmt.Errorf("tokenizer %s: larger than %d bytes; is it a tokenizer.json?", path, maxHFBytes)
	}
	return b, nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ParseHF builds an HF tokenizer from the bytes of a tokenizer.json;
// name labels it (Name returns "hf:"+name).
func ParseHF(name string, b []byte) (*HF, error) {
	var f hfFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("tokenizer %s: decoding tokenizer.json: %w", name, err)
	}
	t := &HF{core: core{name: "hf:" + name, memo: map[string][]int{}}, sum: sha256Hex(b)}
	var err error
	if t.norm, err = normalizers(name, f.Normalizer); err != nil {
		return nil, err
	}
	if t.pre, err = preSteps(name, f.PreTokenizer); err != nil {
		return nil, err
	}
	if t.word, err = newModel(name, &f.Model, endsByteLevel(t.pre)); err != nil {
		return nil, err
	}
	if t.post, err = newPostProcessor(name, f.PostProc); err != nil {
		return nil, err
	}
	t.added = newAddedTokens(f.AddedTokens)
	return t, nil
}

// newModel is the word encoder of a tokenizer.json's model.
func newModel(file string, m *hfModel, byteLevel bool) (func(string) []int, error) {
	switch m.Type {
	case "WordPiece":
		w, err := newWordPiece(file, m)
		if err != nil {
			return nil, err
		}
		return w.encode, nil
	case "Unigram":
		u, err := newUnigram(file, m)
		if err != nil {
			return nil, err
		}
		return u.encode, nil
	}
	if !byteLevel && !m.ByteFallback && m.UnkToken == nil {
		return nil, &UnsupportedError{File: file, What: "a BPE model with neither a ByteLevel pre-tokenizer, byte_fallback nor an unk_token"}
	}
	bpe, err := newBPE(file, m)
	if err != nil {
		return nil, err
	}
	return bpe.encode, nil
}

func (t *core) Name() string { return t.name }

func (t *core) Count(text string) int { return len(t.Encode(text)) }

// Encode returns the IDs of text: added tokens first, then per remaining
// segment the normalizer, the pre-tokenizers and the word encoder.
func (t *core) Encode(text string) []int {
	var out []int
	t.added.split(text, func(seg string, id int, first bool) {
		if id >= 0 {
			out = append(out, id)
			return
		}
		for _, f := range t.norm {
			seg = f(seg)
		}
		if seg == "" { // normalized away (a Strip of blanks): no tokens, not a Metaspace's ▁
			return
		}
		for _, piece := range pretokenize(t.pre, seg, first) {
			out = append(out, t.encodeWord(piece)...)
		}
	})
	return out
}

// encodeWord is the encoding of one pre-token, memoized.
func (t *core) encodeWord(piece string) []int {
	t.mu.Lock()
	ids, ok := t.memo[piece]
	t.mu.Unlock()
	if ok {
		return ids
	}
	ids = t.word(piece)
	if len(piece) > 256 { // long runs are rare: not worth a memo slot
		return ids
	}
	t.mu.Lock()
	if len(t.memo) >= maxMemo {
		clear(t.memo)
	}
	t.memo[piece] = ids
	t.mu.Unlock()
	return ids
}

// addedTokens matches added tokens in text, longest first at each
// position; only positions whose byte starts some token are tried.
type addedTokens struct {
	first [256]bool
	byLen []hfAdded // longest first
}

func newAddedTokens(list []hfAdded) addedTokens {
	var a addedTokens
	for _, t := range list {
		if t.Content == "" {
			continue
		}
		a.first[t.Content[0]] = true
		a.byLen = append(a.byLen, t)
	}
	for i := 1; i < len(a.byLen); i++ { // insertion sort by length, descending
		for j := i; j > 0 && len(a.byLen[j].Content) > len(a.byLen[j-1].Content); j-- {
			a.byLen[j], a.byLen[j-1] = a.byLen[j-1], a.byLen[j]
		}
	}
	return a
}

// split calls fn with the segments of text between added tokens (id −1)
// and with each added token (its id); first says the segment starts text.
func (a *addedTokens) split(text string, fn func(seg string, id int, first bool)) {
	start := 0
	for i := 0; i < len(text); i++ {
		if !a.first[text[i]] {
			continue
		}
		for _, t := range a.byLen {
			if strings.HasPrefix(text[i:], t.Content) {
				if i > start {
					fn(text[start:i], -1, start == 0)
				}
				fn(t.Content, t.ID, i == 0)
				start = i + len(t.Content)
				i = start - 1
				break
			}
		}
	}
	if start < len(text) {
		fn(text[start:], -1, start == 0)
	}
}
