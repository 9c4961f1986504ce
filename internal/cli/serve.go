package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"

	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/stack/profile"
	"github.com/spf13/cobra"
)

// serveOptions are serve's flags; they override the stack config file.
type serveOptions struct {
	listen  string
	config  string
	policy  string
	verbose bool
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the reference stack: OpenAI-compatible gateway, scheduler, simulated engines, index",
		Long: `serve starts the whole reference stack in one process: the gateway with its
scheduler and admin API, and the engines named in the stack config (in-process
simulated engines, child processes, or remote OpenAI-compatible URLs). It prints
"sagebench serve: listening on http://ADDR" once it accepts connections and shuts
down gracefully on SIGINT/SIGTERM. See docs/serve.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.stackConfig(cmd)
			if err != nil {
				return err
			}
			return runStack(cmd.Context(), cfg, cmd.OutOrStdout(), cmd.ErrOrStderr(), o.verbose)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address to listen on (port 0 picks a free port)")
	f.StringVar(&o.config, "config", "", "stack config YAML (strict; see docs/serve.md)")
	f.StringVar(&o.policy, "policy", "", "scheduling policy: fifo, priority, slo_aware, fair_share, hybrid, adaptive")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log at debug level to stderr")
	cmd.AddCommand(newServeEngineCmd())
	return cmd
}

func (o serveOptions) stackConfig(cmd *cobra.Command) (stack.Config, error) {
	cfg := stack.DefaultConfig()
	if o.config != "" {
		if err := readConfig(cmd.Context(), o.config, func() error {
			c, err := stack.LoadConfig(o.config)
			if err != nil {
				return usageErrorf("%v", err)
			}
			cfg = c
			return nil
		}); err != nil {
			return stack.Config{}, err // cfg may still be written by the abandoned read
		}
	}
	adminEnv := cfg.Admin.TokenEnv
	if adminEnv == "" {
		adminEnv = "SAGEBENCH_ADMIN_TOKEN"
	}
	addSecretEnv(cmd.Context(), adminEnv)
	for _, e := range cfg.Engines {
		addSecretEnv(cmd.Context(), e.APIKeyEnv) // a remote engine's key, which -v logs could quote
	}
	if cmd.Flags().Changed("listen") || o.config == "" {
		cfg.Listen = o.listen
	}
	if o.policy != "" {
		cfg.Policy = o.policy
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageErrorf("%v", err)
	}
	return cfg, nil
}

// runStack starts a stack, prints its listening line and serves until ctx
// ends, then shuts down within the config's shutdown timeout.
func runStack(ctx context.Context, cfg stack.Config, stdout, stderr io.Writer, verbose bool) error {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	s, err := stack.Launch(ctx, cfg, stack.Options{Logger: logger, EngineStderr: stderr})
	var ce *stack.ConfigError
	if errors.As(err, &ce) {
		return usageErrorf("%v", err)
	}
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintf(stdout, "%s%s\n", stack.ListenLine, s.URL())
	select {
	case <-ctx.Done():
	case err = <-s.Wait():
		err = fmt.Errorf("serve: server stopped: %w", err)
	}
	grace := cfg.Limits.ShutdownTimeout
	if grace <= 0 {
		grace = 10 * time.Second
	}
	cctx, cancel := context.WithTimeout(context.Background(), grace+5*time.Second)
	defer cancel()
	return errors.Join(err, s.Close(cctx))
}

type serveEngineOptions struct {
	profile   string
	kind      string
	listen    string
	id        string
	seed      int64
	tokenizer string
	verbose   bool
}

func newServeEngineCmd() *cobra.Command {
	var o serveEngineOptions
	cmd := &cobra.Command{
		Use:   "engine",
		Short: "Run one simulated engine behind its own OpenAI-compatible API (a child of serve, or standalone)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.stackConfig()
			if err != nil {
				return err
			}
			return runStack(cmd.Context(), cfg, cmd.OutOrStdout(), cmd.ErrOrStderr(), o.verbose)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.profile, "profile", "", "engine profile from the catalog (required)")
	f.StringVar(&o.kind, "kind", "", "llm or embedding (default: the profile's kind)")
	f.StringVar(&o.listen, "listen", "127.0.0.1:0", "address to listen on (port 0 picks a free port)")
	f.StringVar(&o.id, "id", "", "engine id (default: the profile name)")
	f.Int64Var(&o.seed, "seed", 1, "seed of the engine's jitter and text")
	f.StringVar(&o.tokenizer, "tokenizer", "", "tokenizer the engine counts prompts (an embedder: its inputs) with: cl100k_base (default; an embedder: words), o200k_base or a tokenizer.json path")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log at debug level to stderr")
	return cmd
}

func (o serveEngineOptions) stackConfig() (stack.Config, error) {
	if o.profile == "" {
		return stack.Config{}, usageErrorf("serve engine: --profile is required")
	}
	cat, err := profile.Default()
	if err != nil {
		return stack.Config{}, err
	}
	kind := o.kind
	if kind == "" {
		kind = "embedding"
		if _, err := cat.LLM(o.profile); err == nil {
			kind = "llm"
		}
	}
	id := o.id
	if id == "" {
		id = o.profile
	}
	cfg := stack.Config{Listen: o.listen, Policy: protocol.PolicyFIFO, Seed: o.seed, Tokenizer: o.tokenizer,
		Engines: []stack.EngineConfig{{ID: id, Kind: kind, Profile: o.profile, Seed: o.seed}}}
	if kind == "embedding" {
		cfg.Tokenizer, cfg.EmbeddingTokenizer = "", o.tokenizer
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageErrorf("serve engine: %v", err)
	}
	return cfg, nil
}
