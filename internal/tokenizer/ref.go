package tokenizer

import "sync"

// Ref is a run's tokenizer in the one form it travels in, from config
// resolution to the Qs' prompt datasets, the runner's prompt synthesizer
// and the embedded stack: its spec (what records and the nodes of a fleet
// rebuild it from) and the tokenizer it names, loaded once on first use
// (a tokenizer.json takes a second to parse). A nil *Ref is the default
// tokenizer. Safe for concurrent use.
type Ref struct {
	spec string
	get  func() (Tokenizer, error)
}

// NewRef returns the Ref of spec (as Load takes it), not loaded yet.
func NewRef(spec string) *Ref {
	return &Ref{spec: spec, get: sync.OnceValues(func() (Tokenizer, error) { return Load(spec) })}
}

// RefOf returns a Ref of tok, already loaded, under spec.
func RefOf(spec string, tok Tokenizer) *Ref {
	return &Ref{spec: spec, get: func() (Tokenizer, error) { return tok, nil }}
}

// Spec is the spec r names ("" for the default).
func (r *Ref) Spec() string {
	if r == nil {
		return ""
	}
	return r.spec
}

// Get returns the tokenizer, loading it on the first call.
func (r *Ref) Get() (Tokenizer, error) {
	if r == nil {
		return Default(), nil
	}
	return r.get()
}

// Loader is a loader of specs that returns r's tokenizer for r's own spec
// and loads any other with Load: what a component that may be configured
// with a tokenizer of its own (the embedded stack's `tokenizer:`) is given.
func (r *Ref) Loader() func(spec string) (Tokenizer, error) {
	return func(spec string) (Tokenizer, error) {
		if spec == r.Spec() {
			return r.Get()
		}
		return Load(spec)
	}
}
