package target

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// EmbeddedStack returns the Starter of the in-process reference stack:
// the stack YAML at spec.Path, else spec.YAML, else stack.DefaultConfig, on
// 127.0.0.1 with a free port, seeded with spec.Seed, its admin API open to
// loopback callers only. A stack with topology: split runs its gateway
// and engines as child processes behind a proxy in this process.
// logger may be nil.
func EmbeddedStack(logger *slog.Logger) Starter {
	return func(ctx context.Context, spec StackSpec) (string, func(context.Context) error, error) {
		cfg := stack.DefaultConfig()
		var err error
		switch {
		case spec.Path != "":
			cfg, err = stack.LoadConfig(spec.Path)
		case len(spec.YAML) > 0:
			cfg, err = stack.ParseConfig(spec.YAML)
		}
		if err != nil {
			return "", nil, err
		}
		cfg.Listen = "127.0.0.1:0"
		cfg.Seed = spec.Seed
		if cfg.Tokenizer == "" && spec.Tokenizer.Spec() != tokenizer.ServerSpec { // tokenizer: server counts as the stack's own does
			cfg.Tokenizer = spec.Tokenizer.Spec()
		}
		if cfg.EmbeddingTokenizer == "" {
			cfg.EmbeddingTokenizer = spec.EmbeddingTokenizer.Spec()
		}
		if cfg.ChatTemplate == "" {
			cfg.ChatTemplate = spec.ChatTemplate
		}
		s, err := stack.Launch(ctx, cfg, stack.Options{Logger: logger, Getenv: withoutAdminToken(cfg.Admin.TokenEnv),
			LoadTokenizer: spec.loader()})
		if err != nil {
			return "", nil, fmt.Errorf("embedded stack: %w", err)
		}
		if spec.Attach != nil {
			spec.Attach(s)
		}
		return s.URL(), s.Close, nil
	}
}

// withoutAdminToken hides the admin token from the embedded stack: it
// listens on loopback inside this process, and the run switches its policy.
func withoutAdminToken(tokenEnv string) func(string) string {
	return func(name string) string {
		if name == DefaultAdminTokenEnv || (tokenEnv != "" && name == tokenEnv) {
			return ""
		}
		return os.Getenv(name)
	}
}

// loader loads a tokenizer spec for the stack: the run's tokenizers as
// already loaded, any other anew.
func (spec StackSpec) loader() func(string) (tokenizer.Tokenizer, error) {
	run := spec.Tokenizer.Loader()
	return func(s string) (tokenizer.Tokenizer, error) {
		if spec.EmbeddingTokenizer != nil && s == spec.EmbeddingTokenizer.Spec() {
			return spec.EmbeddingTokenizer.Get()
		}
		return run(s)
	}
}
