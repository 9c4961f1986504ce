package cli

import (
	"io"
	"log/slog"

	"github.com/sagebench/sagebench/internal/target"
)

// embeddedStarter starts the in-process reference stack; its log goes to
// log (stderr with --verbose, else nowhere).
func embeddedStarter(log io.Writer) target.Starter {
	var logger *slog.Logger
	if log != io.Discard {
		logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return target.EmbeddedStack(logger)
}
