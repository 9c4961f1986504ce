package dataflow

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Operator is the behaviour of one stage. Process handles one input record
// and hands each output to emit, which blocks while the next stage's queue
// is full (backpressure) and returns an error when the run is stopping or
// the call has timed out; an operator must return when emit fails or ctx is
// done. Emitting nothing filters the record out; emitting several fans out.
//
// Delivery is at least once: the same input (same ID) may be processed more
// than once, concurrently on different workers, and its outputs may reach
// the next stage twice; operators must be idempotent with respect to the
// record ID. One Operator value serves all workers of a stage, so Process
// must be safe for concurrent use. emit must not be called after Process
// has returned, nor from two goroutines at once.
type Operator interface {
	Process(ctx context.Context, in Record, emit func(Record) error) error
}

// OperatorFunc adapts a function to Operator.
type OperatorFunc func(ctx context.Context, in Record, emit func(Record) error) error

// Process calls f.
func (f OperatorFunc) Process(ctx context.Context, in Record, emit func(Record) error) error {
	return f(ctx, in, emit)
}

var _ Operator = OperatorFunc(nil)

// Factory builds the operator of one stage from its configuration. It is
// called once per stage when a graph is deployed.
type Factory func(stage StageConfig) (Operator, error)

// Registry maps operator names to factories. The zero value is not usable;
// create one with NewRegistry. A Registry is safe for concurrent reads once
// registration is done; Register itself is not synchronised.
type Registry struct {
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{factories: map[string]Factory{}} }

// Register adds a factory under name. It fails on an empty name, a nil
// factory or a name already taken.
func (r *Registry) Register(name string, f Factory) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("registering operator: empty name")
	case f == nil:
		return fmt.Errorf("registering operator %q: nil factory", name)
	}
	if _, dup := r.factories[name]; dup {
		return fmt.Errorf("registering operator %q: name already registered", name)
	}
	r.factories[name] = f
	return nil
}

// RegisterFunc registers an operator that needs no configuration.
func (r *Registry) RegisterFunc(name string, f OperatorFunc) error {
	if f == nil {
		return fmt.Errorf("registering operator %q: nil function", name)
	}
	return r.Register(name, func(StageConfig) (Operator, error) { return f, nil })
}

// Names returns the registered operator names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.factories))
	for n := range r.factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the factory registered under name.
func (r *Registry) Lookup(name string) (Factory, bool) {
	f, ok := r.factories[name]
	return f, ok
}

// Validate checks g (Graph.Validate) and that every stage names a
// registered operator; the first unknown one is reported as an
// *UnknownOperatorError.
func (r *Registry) Validate(g Graph) error {
	if err := g.Validate(); err != nil {
		return err
	}
	for _, s := range g.Stages {
		if _, ok := r.factories[s.Operator]; !ok {
			return &UnknownOperatorError{Stage: s.Name, Operator: s.Operator, Registered: r.Names()}
		}
	}
	return nil
}

// Build validates g (Validate) and creates one operator per stage with
// the stages' factories.
func (r *Registry) Build(g Graph) ([]Operator, error) {
	if err := r.Validate(g); err != nil {
		return nil, err
	}
	ops := make([]Operator, len(g.Stages))
	for i, s := range g.Stages {
		op, err := r.factories[s.Operator](s)
		if err != nil {
			return nil, fmt.Errorf("building stage %q (operator %q): %w", s.Name, s.Operator, err)
		}
		if op == nil {
			return nil, fmt.Errorf("building stage %q (operator %q): factory returned nil", s.Name, s.Operator)
		}
		ops[i] = op
	}
	return ops, nil
}

// UnknownOperatorError is returned when a stage names an operator that is
// not in the registry.
type UnknownOperatorError struct {
	Stage      string
	Operator   string
	Registered []string // sorted
}

func (e *UnknownOperatorError) Error() string {
	return fmt.Sprintf("stage %q: unknown operator %q (registered: %s)",
		e.Stage, e.Operator, strings.Join(slices.Clone(e.Registered), ", "))
}
