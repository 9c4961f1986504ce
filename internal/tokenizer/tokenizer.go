package tokenizer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Tokenizer turns text into token IDs. Implementations are safe for
// concurrent use.
type Tokenizer interface {
	// Name identifies the tokenizer in records and docs ("cl100k_base",
	// "hf:<file>").
	Name() string
	// Encode returns the token IDs of text (no special tokens added).
	Encode(text string) []int
	// Count is len(Encode(text)).
	Count(text string) int
}

// Names of the embedded vocabularies.
const (
	CL100K = "cl100k_base"
	O200K  = "o200k_base"
	// DefaultName is the tokenizer used when a config names none.
	DefaultName = CL100K
)

// Builtins lists the embedded vocabularies.
func Builtins() []string { return []string{CL100K, O200K} }

// The embedded vocabularies are built on first use and immutable
// afterwards, like a compiled regexp.
var (
	cl100k = sync.OnceValue(func() *Tiktoken { return newTiktoken(CL100K, codec.NewCl100kBase(), cl100kPattern, 100256) })
	o200k  = sync.OnceValue(func() *Tiktoken { return newTiktoken(O200K, codec.NewO200kBase(), o200kPattern, 199998) })
)

// Default returns the default tokenizer (cl100k_base).
func Default() Tokenizer { return cl100k() }

// ErrUnknown is returned by Load for a spec that is neither an embedded
// vocabulary nor a readable file.
var ErrUnknown = errors.New("unknown tokenizer")

// Load returns the tokenizer spec names: "" (the default), an embedded
// vocabulary (cl100k_base, o200k_base) or the path of a Hugging Face
// tokenizer.json.
func Load(spec string) (Tokenizer, error) {
	switch spec {
	case "", CL100K:
		return cl100k(), nil
	case O200K:
		return o200k(), nil
	}
	if !strings.HasSuffix(spec, ".json") {
		if _, err := os.Stat(spec); err != nil {
			return nil, fmt.Errorf("%w %q: use %s or the path of a Hugging Face tokenizer.json", ErrUnknown, spec, strings.Join(Builtins(), ", "))
		}
	}
	return LoadHF(spec)
}

// ErrMismatch is returned by LoadVerified for a tokenizer.json whose
// SHA-256 is not the expected one.
var ErrMismatch = errors.New("a different tokenizer.json")

// Fingerprint is the hex SHA-256 of the tokenizer.json t was parsed from,
// and "" for an embedded vocabulary (its name says everything): what
// tells two machines' copies of a file apart.
func Fingerprint(t Tokenizer) string {
	if h, ok := t.(*HF); ok {
		return h.sum
	}
	return ""
}

// LoadVerified is Load for a spec loaded elsewhere with Fingerprint sum:
// a tokenizer.json must be the same file (ErrMismatch otherwise), read
// once for the check and the parse.
func LoadVerified(spec, sum string) (Tokenizer, error) {
	if builtin(spec) {
		return Load(spec)
	}
	b, err := readHF(spec)
	if err != nil {
		return nil, err
	}
	if got := sha256Hex(b); got != sum {
		return nil, fmt.Errorf("%w: SHA-256 %.12s…, the run's %.12s…", ErrMismatch, got, sum)
	}
	return ParseHF(filepath.Base(spec), b)
}

// builtin says spec names an embedded vocabulary ("" is the default).
func builtin(spec string) bool { return spec == "" || slices.Contains(Builtins(), spec) }

// Validate checks spec without loading a vocabulary: an embedded name or
// an existing file.
func Validate(spec string) error {
	if builtin(spec) {
		return nil
	}
	if _, err := os.Stat(spec); err != nil {
		return fmt.Errorf("%w %q: use %s or the path of a Hugging Face tokenizer.json (%v)", ErrUnknown, spec, strings.Join(Builtins(), ", "), err)
	}
	return nil
}
