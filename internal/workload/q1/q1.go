package q1

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/rag"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/workload"
)

// Request type of a Q1 transaction record.
const TypeRAG = rag.RequestType

// Spec is Q1's catalog entry.
func Spec() workload.Spec {
	return workload.Spec{
		ID: "Q1", Name: "PipelineChain", Entry: "e2e_pipeline", Distributed: true,
		Description: "RAG transaction: embed query → retrieve top-k → generate with the retrieved context; primary: goodput (tx/s meeting the end-to-end SLO)",
		New:         func(quick bool) workload.Workload { return &q1{cfg: Default(quick)} },
		Primary:     defGoodput,
		Figure:      workload.Figure{Recipe: workload.FigureStages, Table: TableStages},
		Files:       []string{filePipeline},
	}
}

// Config configures Q1 PipelineChain (config section q1).
type Config struct {
	// Schedule of the transactions' arrivals.
	Schedule load.ScheduleConfig `yaml:"schedule" json:"schedule"`
	// TopK is how many documents retrieve asks for.
	TopK int `yaml:"top_k" json:"top_k"`
	// QuestionTokens is each question's length in tokens of the run's
	// tokenizer, a distribution drawn with the run's seed: the words of
	// one corpus document in a random order, as many as fit (so that its
	// answer exists), filled out to the exact count (shape.Synth.Fit).
	QuestionTokens shape.Dist `yaml:"question_tokens" json:"question_tokens"`
	// QueryWords is the deprecated alias of question_tokens: N is read as
	// a fixed count of tokens (not words) and goes away after this release.
	QueryWords int `yaml:"query_words,omitempty" json:"query_words,omitempty"`
	// questionTokens is QuestionTokens compiled by Validate (an empirical
	// file read once); nil until then.
	questionTokens *shape.Sampler
	Tenant         string `yaml:"tenant" json:"tenant"`
	// Embedding and LLM name the models the operators ask for.
	Embedding Q1Model `yaml:"embedding" json:"embedding"`
	LLM       Q1Model `yaml:"llm" json:"llm"`
	// Index is the corpus the questions come from. The embedded stack is
	// started with the same index (StackYAML), so recall@k is measured
	// against exact search on that corpus.
	Index Q1Index `yaml:"index" json:"index"`
	SLO   Q1SLO   `yaml:"slo" json:"slo"`
	// Graph is the runtime graph: embed → retrieve → generate. A stage's
	// parallelism 0 (and graph.parallelism 0) takes --parallelism times
	// the stage's width.
	Graph dataflow.Graph `yaml:"graph" json:"graph"`
	// Width multiplies --parallelism per operator (embed, retrieve,
	// generate; missing: 1). A worker
	// of the generate stage holds its transaction for the whole streamed
	// answer, so at the default --parallelism 2 a width of 1 would make
	// the harness's own pipeline the bottleneck (Little's law: 40 tx/s ×
	// ~0.4 s needs ~16 in service); its default width is 16.
	Width map[string]int `yaml:"width" json:"width"`
	// Serialize sends every record through the runtime's wire format at
	// each stage boundary, as a distributed engine would (test mode).
	Serialize bool `yaml:"serialize" json:"serialize"`
	// Targeting is the q1.target block.
	workload.Targeting `yaml:",inline" json:",inline"`
}

// Q1Model is a model name and, for the LLM, its output budget.
type Q1Model struct {
	Model     string `yaml:"model" json:"model"`
	MaxTokens int    `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
}

// Q1Index describes the synthetic corpus (internal/corpus) and the embedded
// stack's index over it.
type Q1Index struct {
	Size     int   `yaml:"size" json:"size"`
	Seed     int64 `yaml:"seed" json:"seed"` // 0: the run's seed, as the stack does
	M        int   `yaml:"m" json:"m"`       // HNSW parameters of the stack's index (0: its defaults)
	EfSearch int   `yaml:"ef_search" json:"ef_search"`
}

// Q1SLO are the transaction's and each stage's objectives (0: no bound).
// A stage's latency is its time in the runtime: queueing plus service.
// A transaction meets its SLO when it succeeded, its E2E (from the
// intended send) is within E2E and every stage is within its bound.
type Q1SLO struct {
	E2E      time.Duration `yaml:"e2e" json:"e2e"`
	Embed    time.Duration `yaml:"embed" json:"embed"`
	Retrieve time.Duration `yaml:"retrieve" json:"retrieve"`
	Generate time.Duration `yaml:"generate" json:"generate"`
}

// stage returns the bound of the stage run by operator op.
func (s Q1SLO) stage(op string) time.Duration {
	switch op {
	case rag.OpEmbed:
		return s.Embed
	case rag.OpRetrieve:
		return s.Retrieve
	case rag.OpGenerate:
		return s.Generate
	}
	return 0
}

// Default returns Q1's defaults: full scale 1,000 transactions at
// 40 tx/s Poisson, k = 5, 64 output tokens; quick 100 at 20 tx/s, 32 tokens.
func Default(quick bool) *Config {
	c := &Config{
		Schedule:       load.ScheduleConfig{Process: load.ProcessPoisson, Rate: 40, Count: 1000},
		TopK:           5,
		QuestionTokens: shape.FixedDist(24),
		Tenant:         "tenant-a",
		Embedding:      Q1Model{Model: "BAAI/bge-small-en-v1.5"},
		LLM:            Q1Model{Model: "meta-llama/Llama-3.1-8B-Instruct", MaxTokens: 64},
		Index:          Q1Index{Size: 2000},
		SLO:            Q1SLO{E2E: 2 * time.Second, Embed: 250 * time.Millisecond, Retrieve: 100 * time.Millisecond, Generate: 1500 * time.Millisecond},
		Graph: dataflow.Graph{Name: "q1", Stages: []dataflow.StageConfig{
			{Name: "embed", Operator: rag.OpEmbed, Timeout: 10 * time.Second},
			{Name: "retrieve", Operator: rag.OpRetrieve, Timeout: 10 * time.Second},
			{Name: "generate", Operator: rag.OpGenerate, Timeout: 60 * time.Second},
		}},
		Width: map[string]int{"generate": 16},
	}
	if quick {
		c.Schedule.Rate, c.Schedule.Count = 20, 100
		c.LLM.MaxTokens = 32
	}
	return c
}

// Validate reports the first problem, naming the q1 key.
func (c *Config) Validate() error {
	if err := c.Schedule.Validate(); err != nil {
		return fmt.Errorf("q1.%w", err)
	}
	switch {
	case c.TopK < 1 || c.TopK > maxTopK:
		return fmt.Errorf("q1.top_k %d: must be in [1, %d]", c.TopK, maxTopK)
	case c.QueryWords < 0 || c.QueryWords > MaxQuestionTokens:
		return fmt.Errorf("q1.query_words %d: must be in [0, %d] (0: unset); write question_tokens instead", c.QueryWords, MaxQuestionTokens)
	case c.Embedding.Model == "":
		return errors.New("q1.embedding.model: must be set")
	case c.LLM.Model == "" || c.LLM.MaxTokens < 1:
		return errors.New("q1.llm: model must be set and max_tokens ≥ 1")
	case c.SLO.E2E < 0 || c.SLO.Embed < 0 || c.SLO.Retrieve < 0 || c.SLO.Generate < 0:
		return errors.New("q1.slo: bounds must be ≥ 0 (0 = no bound)")
	}
	if err := c.validateQuestions(); err != nil {
		return err
	}
	// m and ef_search configure the embedded stack's HNSW index; the
	// bounds are those of stack/index, which checks them again at start.
	if c.Index.Size < 1 || c.Index.M < 0 || c.Index.M == 1 || c.Index.M > 256 || c.Index.EfSearch < 0 || c.Index.EfSearch > 10000 {
		return fmt.Errorf("q1.index: size must be ≥ 1, m in [2, 256] and ef_search in [1, 10000] (0 = default)")
	}
	if err := (corpus.Config{Size: c.Index.Size, Seed: c.Index.Seed}).WithDefaults().Validate("q1.index"); err != nil {
		return err
	}
	if err := c.validateGraph(); err != nil {
		return err
	}
	if err := c.Target.Validate("q1.target", workload.TargetDefs(defs...)); err != nil {
		return err
	}
	return c.validateWidth()
}

// MaxQuestionTokens bounds a question: far beyond an embedding model's
// input, low enough that the questions of a run fit in memory.
const MaxQuestionTokens = 8192

// validateQuestions folds the deprecated query_words into
// question_tokens and checks the distribution and its bound.
func (c *Config) validateQuestions() error {
	if c.QueryWords > 0 {
		c.QuestionTokens, c.QueryWords = shape.FixedDist(c.QueryWords), 0
	}
	sm, err := c.QuestionTokens.Compile("q1.question_tokens", 1)
	if err != nil {
		return err
	}
	if sm.Bound() > MaxQuestionTokens {
		return fmt.Errorf("q1.question_tokens: can draw %d tokens; bound it to ≤ %d (max)", sm.Bound(), MaxQuestionTokens)
	}
	c.questionTokens = sm
	return nil
}

// validateWidth checks that every width names an operator and is ≥ 1.
func (c *Config) validateWidth() error {
	for name, w := range c.Width {
		if !slices.Contains(rag.Ops, name) {
			return fmt.Errorf("q1.width.%s: not an operator; use one of %s", name, strings.Join(rag.Ops, ", "))
		}
		if w < 1 || w > 1024 {
			return fmt.Errorf("q1.width.%s %d: must be in [1, 1024]", name, w)
		}
	}
	return nil
}

// maxStageName bounds a stage's name (below record.MaxFieldBytes, which
// requests.jsonl keeps of it).
const maxStageName = 64

// validateGraph checks the graph's structure, that every operator is one
// of rag.Ops with valid params, and that the stages run the transaction in
// order: embed, retrieve, generate.
func (c *Config) validateGraph() error {
	reg := dataflow.NewRegistry()
	if err := rag.Register(reg, nil, c.ragDefaults()); err != nil {
		return err
	}
	if err := reg.Validate(c.Graph); err != nil {
		return fmt.Errorf("q1.graph: %w", err)
	}
	var ops []string
	for i, s := range c.Graph.Stages {
		if len(s.Name) > maxStageName {
			// requests.jsonl keeps MaxFieldBytes of a stage's name: a longer
			// one could not be joined back to pipeline.json
			return fmt.Errorf("q1.graph.stages[%d].name: %d bytes; at most %d", i, len(s.Name), maxStageName)
		}
		f, _ := reg.Lookup(s.Operator)
		if _, err := f(s); err != nil {
			return fmt.Errorf("q1.graph: %w", err)
		}
		ops = append(ops, s.Operator)
	}
	if strings.Join(ops, ",") != strings.Join(rag.Ops, ",") {
		return fmt.Errorf("q1.graph.stages: operators %s; a Q1 transaction runs %s, one stage each, in that order",
			strings.Join(ops, ", "), strings.Join(rag.Ops, " → "))
	}
	return nil
}

func (c *Config) ragDefaults() rag.Defaults {
	return rag.Defaults{EmbedModel: c.Embedding.Model, TopK: c.TopK, LLMModel: c.LLM.Model, MaxTokens: c.LLM.MaxTokens}
}

// Models lists the models the graph's embed and generate stages ask for
// (a stage's model param, else embedding.model / llm.model).
func (c *Config) Models() []string { return c.models(true) }

// ChatModels lists the generate stages' models alone.
func (c *Config) ChatModels() []string { return c.models(false) }

func (c *Config) models(embed bool) []string {
	var out []string
	for _, st := range c.Graph.Stages {
		def := ""
		switch {
		case st.Operator == rag.OpEmbed && embed:
			def = c.Embedding.Model
		case st.Operator == rag.OpGenerate:
			def = c.LLM.Model
		default:
			continue
		}
		if m := cmp.Or(st.Params["model"], def); m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// Override applies --rate, --total-requests and --duration; --llm-ratio
// does not apply (every transaction generates).
func (c *Config) Override(o workload.Overrides) []string {
	o.ApplySchedule(&c.Schedule)
	return o.Unused("llm-ratio")
}

// StackYAML is the embedded stack for Q1: the default pool with Q1's
// index, so the corpus the questions come from is the one retrieve
// searches (index.seed 0 there also means the run's seed).
func (q *q1) StackYAML() []byte {
	ix := q.cfg.Index
	return fmt.Appendf(nil, "index:\n  size: %d\n  seed: %d\n  m: %d\n  ef_search: %d\n", ix.Size, ix.Seed, ix.M, ix.EfSearch)
}
