package target

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/sagebench/sagebench/internal/stack"
)

// EmbeddedStack returns the Starter of the in-process reference stack:
// stack.DefaultConfig (or the YAML at stackConfig) on 127.0.0.1 with a
// free port, seeded with seed, its admin API open to loopback callers
// only. logger may be nil.
func EmbeddedStack(logger *slog.Logger) Starter {
	return func(ctx context.Context, stackConfig string, seed int64) (string, func(context.Context) error, error) {
		cfg := stack.DefaultConfig()
		if stackConfig != "" {
			var err error
			if cfg, err = stack.LoadConfig(stackConfig); err != nil {
				return "", nil, err
			}
		}
		cfg.Listen = "127.0.0.1:0"
		cfg.Seed = seed
		s, err := stack.Start(ctx, cfg, stack.Options{Logger: logger, Getenv: withoutAdminToken(cfg.Admin.TokenEnv)})
		if err != nil {
			return "", nil, fmt.Errorf("embedded stack: %w", err)
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
