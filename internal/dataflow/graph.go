package dataflow

import (
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/strictyaml"
)

// Defaults applied to zero-valued fields of a Graph.
const (
	DefaultParallelism   = 1
	DefaultQueueCapacity = 256
)

// Upper bounds Validate enforces, so that a configuration typo is an error
// rather than a Deploy that cannot allocate its queues or workers.
const (
	MaxParallelism   = 1 << 14 // workers per stage
	MaxQueueCapacity = 1 << 20 // input-queue slots per stage
)

// Graph is a dataflow graph: a chain of named stages. The caller submits
// records to the first stage; each stage's outputs feed the next; the last
// stage's outputs (and the error records of any stage) are the results.
type Graph struct {
	Name string `yaml:"name"`
	// Parallelism is the default number of workers per stage (the
	// --parallelism flag); 0 means DefaultParallelism.
	Parallelism int `yaml:"parallelism"`
	// QueueCapacity is the default capacity of each stage's input queue;
	// 0 means DefaultQueueCapacity.
	QueueCapacity int           `yaml:"queue_capacity"`
	Stages        []StageConfig `yaml:"stages"`
}

// StageConfig configures one stage. Zero values take the graph's defaults.
type StageConfig struct {
	Name          string            `yaml:"name"`
	Operator      string            `yaml:"operator"`
	Parallelism   int               `yaml:"parallelism"`    // workers; 0: the graph's default
	QueueCapacity int               `yaml:"queue_capacity"` // input queue slots; 0: the graph's default
	Timeout       time.Duration     `yaml:"timeout"`        // per record; 0: none
	Params        map[string]string `yaml:"params"`         // handed to the operator's factory
}

// Validate checks the graph's structure: at least one stage, unique
// non-empty stage names, an operator name on each, no negative numbers. It
// does not know which operators exist; Registry.Validate checks that.
func (g Graph) Validate() error {
	if g.Parallelism < 0 || g.Parallelism > MaxParallelism {
		return fmt.Errorf("graph %q: parallelism %d: must be ≥ 0 (0 means %d) and ≤ %d", g.Name, g.Parallelism, DefaultParallelism, MaxParallelism)
	}
	if g.QueueCapacity < 0 || g.QueueCapacity > MaxQueueCapacity {
		return fmt.Errorf("graph %q: queue_capacity %d: must be ≥ 0 (0 means %d) and ≤ %d", g.Name, g.QueueCapacity, DefaultQueueCapacity, MaxQueueCapacity)
	}
	if len(g.Stages) == 0 {
		return fmt.Errorf("graph %q: stages: at least one stage is required", g.Name)
	}
	seen := make(map[string]int, len(g.Stages))
	for i, s := range g.Stages {
		if err := s.validate(); err != nil {
			return fmt.Errorf("graph %q: stages[%d]: %w", g.Name, i, err)
		}
		if j, dup := seen[s.Name]; dup {
			return fmt.Errorf("graph %q: stages[%d]: name %q already used by stages[%d]; stage names must be unique", g.Name, i, s.Name, j)
		}
		seen[s.Name] = i
	}
	return nil
}

func (s StageConfig) validate() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("name: required")
	case s.Operator == "":
		return fmt.Errorf("stage %q: operator: required (a name registered in the operator registry)", s.Name)
	case s.Parallelism < 0 || s.Parallelism > MaxParallelism:
		return fmt.Errorf("stage %q: parallelism %d: must be ≥ 0 and ≤ %d", s.Name, s.Parallelism, MaxParallelism)
	case s.QueueCapacity < 0 || s.QueueCapacity > MaxQueueCapacity:
		return fmt.Errorf("stage %q: queue_capacity %d: must be ≥ 0 and ≤ %d", s.Name, s.QueueCapacity, MaxQueueCapacity)
	case s.Timeout < 0:
		return fmt.Errorf("stage %q: timeout %s: must be ≥ 0 (0 means none)", s.Name, s.Timeout)
	}
	return nil
}

// Resolved returns a copy of the graph with every stage's defaults filled
// in (parallelism, queue capacity), as the engines deploy it.
func (g Graph) Resolved() Graph {
	par, qc := g.Parallelism, g.QueueCapacity
	if par == 0 {
		par = DefaultParallelism
	}
	if qc == 0 {
		qc = DefaultQueueCapacity
	}
	out := g
	out.Stages = make([]StageConfig, len(g.Stages))
	for i, s := range g.Stages {
		if s.Parallelism == 0 {
			s.Parallelism = par
		}
		if s.QueueCapacity == 0 {
			s.QueueCapacity = qc
		}
		out.Stages[i] = s
	}
	return out
}

// ParseGraph decodes a graph from YAML in strict mode (unknown keys are
// errors) and validates its structure.
func ParseGraph(data []byte) (Graph, error) {
	var g Graph
	if err := strictyaml.Unmarshal(data, &g); err != nil {
		return Graph{}, fmt.Errorf("decoding graph: %w", err)
	}
	if err := g.Validate(); err != nil {
		return Graph{}, err
	}
	return g, nil
}
