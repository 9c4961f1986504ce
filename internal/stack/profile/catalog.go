package profile

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/sagebench/sagebench/internal/strictyaml"
)

//go:embed catalog.yaml
var embedded []byte

// ErrUnknown is wrapped by lookups of a profile name the catalog lacks.
var ErrUnknown = errors.New("unknown profile")

// Catalog is a set of named LLM and embedder profiles. Names are unique
// across both kinds.
type Catalog struct {
	LLMs      []LLM      `yaml:"llm"`
	Embedders []Embedder `yaml:"embedders"`
}

// Default returns the catalog embedded in the binary (catalog.yaml).
func Default() (*Catalog, error) {
	c, err := Parse(embedded)
	if err != nil {
		return nil, fmt.Errorf("embedded profile catalog: %w", err)
	}
	return c, nil
}

// LoadFile reads and validates a catalog file.
func LoadFile(path string) (*Catalog, error) {
	data, err := strictyaml.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading profile catalog: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("profile catalog %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes a catalog strictly (unknown keys are errors) and validates it.
func Parse(data []byte) (*Catalog, error) {
	var c Catalog
	if err := strictyaml.Unmarshal(data, &c); err != nil && !errors.Is(err, io.EOF) {
		if derr := durationError(data); derr != nil {
			return nil, derr
		}
		return nil, fmt.Errorf("decoding YAML: %s", yaml.FormatError(err, false, true))
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate checks every profile and that names are unique.
func (c *Catalog) Validate() error {
	var errs []error
	if len(c.LLMs)+len(c.Embedders) == 0 {
		errs = append(errs, errors.New("catalog has no profiles (want llm: and/or embedders: lists)"))
	}
	seen := map[string]bool{}
	dup := func(name string) {
		if name != "" && seen[name] {
			errs = append(errs, &FieldError{Profile: name, Field: "name", Msg: "duplicate profile name"})
		}
		seen[name] = true
	}
	for _, p := range c.LLMs {
		dup(p.Name)
		errs = append(errs, p.Validate())
	}
	for _, p := range c.Embedders {
		dup(p.Name)
		errs = append(errs, p.Validate())
	}
	return errors.Join(errs...)
}

// LLM returns the LLM profile called name.
func (c *Catalog) LLM(name string) (LLM, error) {
	for _, p := range c.LLMs {
		if p.Name == name {
			return p, nil
		}
	}
	return LLM{}, fmt.Errorf("%w: no LLM profile %q (have: %s)", ErrUnknown, name, strings.Join(c.LLMNames(), ", "))
}

// Embedder returns the embedder profile called name.
func (c *Catalog) Embedder(name string) (Embedder, error) {
	for _, p := range c.Embedders {
		if p.Name == name {
			return p, nil
		}
	}
	return Embedder{}, fmt.Errorf("%w: no embedder profile %q (have: %s)", ErrUnknown, name, strings.Join(c.EmbedderNames(), ", "))
}

// LLMNames lists the LLM profile names, sorted.
func (c *Catalog) LLMNames() []string {
	out := make([]string, 0, len(c.LLMs))
	for _, p := range c.LLMs {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// EmbedderNames lists the embedder profile names, sorted.
func (c *Catalog) EmbedderNames() []string {
	out := make([]string, 0, len(c.Embedders))
	for _, p := range c.Embedders {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// Names lists every profile name of both kinds, sorted.
func (c *Catalog) Names() []string {
	out := append(c.LLMNames(), c.EmbedderNames()...)
	slices.Sort(out)
	return out
}

// durationFields are the keys decoded as time.Duration.
var durationFields = []string{"prefill_per_token", "step_base", "step_per_seq", "max_wait", "batch_overhead", "per_token"}

// durationError finds a duration the YAML decoder rejected without saying
// where, and names its profile and field.
func durationError(data []byte) error {
	var raw map[string][]map[string]any
	if strictyaml.Unmarshal(data, &raw) != nil {
		return nil
	}
	for _, list := range []string{"llm", "embedders"} {
		for i, prof := range raw[list] {
			for _, key := range durationFields {
				s, ok := prof[key].(string)
				if !ok {
					continue
				}
				if _, err := time.ParseDuration(s); err != nil {
					return fmt.Errorf("%s[%d] (name %v): %s: invalid duration %q: use Go syntax such as 6.2ms or 50us",
						list, i, prof["name"], key, s)
				}
			}
		}
	}
	return nil
}
