package runconfig

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/ray"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Backends of the shared flag contract.
const (
	BackendSage = "sage"
	BackendRay  = "ray"
)

// MaxRepeat bounds --repeat: each repetition's plan is built before any
// traffic, so an absurd count would spend the planning time and memory
// before a single request.
const MaxRepeat = 10_000

// DefaultDrain bounds the drain of in-flight requests after an interrupt.
const DefaultDrain = 10 * time.Second

// Shared is the configuration every Q shares: the shared flag contract
// (docs/design.md) plus the target and the validity rules. Flags and the
// top-level keys of a config file fill it.
type Shared struct {
	Backend string `yaml:"backend" json:"backend"`
	Nodes   int    `yaml:"nodes" json:"nodes"`
	// NATSURL is an external NATS cluster for --nodes (empty: an embedded
	// server and local worker processes). Credentials come from the
	// environment (NATS_TOKEN) or a creds file, never from here.
	NATSURL string `yaml:"nats_url,omitempty" json:"nats_url,omitempty"`
	// NATSInsecure allows an outside NATS server without credentials
	// (--nats-insecure): recorded, and the report shows it.
	NATSInsecure bool `yaml:"nats_insecure,omitempty" json:"nats_insecure,omitempty"`
	// JoinTokenFile holds the join token the workers of --nodes share
	// (docs/distributed.md); empty: the run generates one and prints it.
	JoinTokenFile string           `yaml:"join_token_file,omitempty" json:"join_token_file,omitempty"`
	Parallelism   int              `yaml:"parallelism" json:"parallelism"`
	Repeat        int              `yaml:"repeat" json:"repeat"`
	Seed          int64            `yaml:"seed" json:"seed"`
	OutputDir     string           `yaml:"output_dir" json:"output_dir"`
	Quick         bool             `yaml:"quick" json:"quick"`
	Target        target.Config    `yaml:"target" json:"target"`
	Validity      summary.Validity `yaml:"validity" json:"validity"`
	Drain         time.Duration    `yaml:"drain" json:"drain"` // after an interrupt
	// Pacer is how the drivers wait for arrivals: load.PacerEfficient
	// (empty, the default) or load.PacerPrecise.
	Pacer string `yaml:"pacer,omitempty" json:"pacer,omitempty"`
	// Ray is the cluster of --backend ray (--ray-address or RAY_ADDRESS).
	Ray ray.Config `yaml:"ray,omitempty" json:"ray,omitempty"`
	// Tokenizer counts and synthesizes request lengths: cl100k_base (the
	// default), o200k_base, or the path of a Hugging Face tokenizer.json
	// (byte-level BPE). The embedded stack counts with it too. "server":
	// the target's own count, calibrated against its POST /tokenize
	// before the load (docs/requests.md).
	Tokenizer string `yaml:"tokenizer,omitempty" json:"tokenizer,omitempty"`
	// ChatTemplate, when set, is the model's tokenizer_config.json (or a
	// Jinja file): synthesized chat prompts are fitted so that, rendered
	// with its chat template, they are input_tokens long in Tokenizer —
	// the server's prompt_tokens.
	ChatTemplate string `yaml:"chat_template,omitempty" json:"chat_template,omitempty"`
	// EmbeddingTokenizer, when set, counts embedding requests' inputs:
	// the embedding model's tokenizer (a spec as Tokenizer's — a BERT
	// WordPiece tokenizer.json, say). Their records' input_tokens are its
	// count, and the embedded stack's embedders count with it too.
	EmbeddingTokenizer string `yaml:"embedding_tokenizer,omitempty" json:"embedding_tokenizer,omitempty"`
}

// DefaultShared returns the defaults of the shared flag contract.
func DefaultShared() Shared {
	return Shared{
		Backend:     BackendSage,
		Nodes:       1,
		Parallelism: 2,
		Repeat:      1,
		Seed:        42,
		OutputDir:   "results",
		Target:      target.Config{URL: target.Embedded},
		Validity:    summary.DefaultValidity(),
		Drain:       DefaultDrain,
	}
}

// Validate reports the first problem of s, naming the flag or key.
func (s Shared) Validate() error {
	switch {
	case s.Repeat < 1 || s.Repeat > MaxRepeat:
		return fmt.Errorf("repeat %d: must be in [1, %d]", s.Repeat, MaxRepeat)
	case s.Parallelism < 1:
		return fmt.Errorf("parallelism %d: must be ≥ 1", s.Parallelism)
	case s.Nodes < 1:
		return fmt.Errorf("nodes %d: must be ≥ 1", s.Nodes)
	case s.Seed < 0 || s.Seed > math.MaxInt64-int64(s.Repeat-1):
		return fmt.Errorf("seed %d: must be in [0, %d] with --repeat %d (repetition r runs with seed+r)", s.Seed, math.MaxInt64-int64(s.Repeat-1), s.Repeat)
	case s.OutputDir == "":
		return errors.New("output_dir is empty; name a directory (default results)")
	case s.Drain < 0:
		return fmt.Errorf("drain %v: must be ≥ 0", s.Drain)
	}
	if _, err := load.FineGapOf(s.Pacer); err != nil {
		return err
	}
	if err := s.validateTokenizer(); err != nil {
		return err
	}
	if err := tokenizer.Validate(s.EmbeddingTokenizer); err != nil {
		return fmt.Errorf("embedding_tokenizer: %w", err)
	}
	if s.ChatTemplate != "" {
		if _, err := chattemplate.Load(s.ChatTemplate); err != nil {
			return fmt.Errorf("chat_template: %w", err)
		}
	}
	switch s.Backend {
	case BackendSage:
	case BackendRay:
		if err := s.Ray.Validate(); err != nil && s.Ray.Address != "" {
			return fmt.Errorf("backend ray: %w", err)
		}
	default:
		return fmt.Errorf("backend %q: choose sage or ray", s.Backend)
	}
	if err := jetstream.CheckURL(s.NATSURL); s.NATSURL != "" && err != nil {
		return fmt.Errorf("nats_url %w", err)
	} else if s.NATSURL != "" && jetstream.HasCredentials(s.NATSURL) {
		return errors.New("nats_url carries credentials; put a token in NATS_TOKEN or a creds file in NATS_CREDS (they are never recorded)")
	}
	if err := s.Target.Validate(); err != nil {
		return err
	}
	return s.Validity.Validate()
}

// Runnable reports what a run needs beyond Validate: the cluster's
// address on --backend ray. A --dry-run prints its plan without it, then
// fails on it as the run would.
func (s Shared) Runnable() error {
	if s.Backend != BackendRay {
		return nil
	}
	if err := s.Ray.Validate(); err != nil {
		return fmt.Errorf("backend ray: %w", err)
	}
	return nil
}
