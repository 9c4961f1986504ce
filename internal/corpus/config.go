package corpus

import (
	"errors"
	"fmt"
)

// Config describes a corpus. Zero fields take the defaults noted;
// Validate checks the result.
type Config struct {
	Size     int   // documents (default 10000)
	Dim      int   // vector dimension (default 384)
	Seed     int64 // corpus seed (0 is a valid seed)
	DocWords int   // words per document (default 32)
	Topics   int   // topic clusters (default Size/20, at least 1)
}

// Limits on Config values.
const (
	MaxSize     = 5_000_000
	MaxDim      = 8192
	MaxDocWords = 4096
)

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Size, 10000)
	def(&c.Dim, 384)
	def(&c.DocWords, 32)
	def(&c.Topics, max(c.Size/20, 1))
	return c
}

// Validate reports impossible values, naming each field under prefix
// (e.g. "index").
func (c Config) Validate(prefix string) error {
	var errs []error
	check := func(ok bool, field, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s.%s: %s", prefix, field, fmt.Sprintf(format, args...)))
		}
	}
	check(c.Size >= 1 && c.Size <= MaxSize, "size", "must be in [1, %d] (got %d)", MaxSize, c.Size)
	check(c.Dim >= 2 && c.Dim <= MaxDim, "dim", "must be in [2, %d] (got %d)", MaxDim, c.Dim)
	check(c.DocWords >= 1 && c.DocWords <= MaxDocWords, "doc_words", "must be in [1, %d] (got %d)", MaxDocWords, c.DocWords)
	check(c.Topics >= 1 && c.Topics <= max(c.Size, 1), "topics", "must be in [1, size] (got %d)", c.Topics)
	return errors.Join(errs...)
}
