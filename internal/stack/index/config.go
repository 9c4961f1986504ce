package index

import (
	"errors"
	"fmt"

	"github.com/sagebench/sagebench/internal/corpus"
)

// Config describes a corpus and its index. Zero fields take the defaults
// noted; Validate checks the result.
type Config struct {
	Size           int     `yaml:"size"`            // documents (default 10000)
	Dim            int     `yaml:"dim"`             // vector dimension (default 384)
	Seed           int64   `yaml:"seed"`            // corpus seed (0 is a valid seed)
	DocWords       int     `yaml:"doc_words"`       // words per document (default 32)
	Topics         int     `yaml:"topics"`          // topic clusters (default Size/20, at least 1)
	M              int     `yaml:"m"`               // HNSW neighbours per node (default 16)
	EfSearch       int     `yaml:"ef_search"`       // HNSW candidate list size when searching (default 64)
	EfConstruction int     `yaml:"ef_construction"` // HNSW candidate list size when inserting (default 128)
	Ml             float64 `yaml:"ml"`              // HNSW level factor (default 0.25)
}

// Limits on Config values.
const (
	MaxSize = corpus.MaxSize
	MaxDim  = corpus.MaxDim
)

// corpus is the part of c that says which documents there are.
func (c Config) corpus() corpus.Config {
	return corpus.Config{Size: c.Size, Dim: c.Dim, Seed: c.Seed, DocWords: c.DocWords, Topics: c.Topics}
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	cc := c.corpus().WithDefaults()
	c.Size, c.Dim, c.DocWords, c.Topics = cc.Size, cc.Dim, cc.DocWords, cc.Topics
	def(&c.M, 16)
	def(&c.EfSearch, 64)
	def(&c.EfConstruction, 128)
	if c.Ml == 0 {
		c.Ml = 0.25
	}
	return c
}

// Validate reports impossible values, naming each field.
func (c Config) Validate() error {
	var errs []error
	check := func(ok bool, field, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("index.%s: %s", field, fmt.Sprintf(format, args...)))
		}
	}
	if err := c.corpus().Validate("index"); err != nil {
		errs = append(errs, err)
	}
	check(c.M >= 2 && c.M <= 256, "m", "must be in [2, 256] (got %d)", c.M)
	check(c.EfSearch >= 1 && c.EfSearch <= 10000, "ef_search", "must be in [1, 10000] (got %d)", c.EfSearch)
	check(c.EfConstruction >= 1 && c.EfConstruction <= 10000, "ef_construction", "must be in [1, 10000] (got %d)", c.EfConstruction)
	check(c.Ml > 0 && c.Ml < 1, "ml", "must be in (0, 1) (got %v)", c.Ml)
	return errors.Join(errs...)
}
