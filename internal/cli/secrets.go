package cli

import (
	"context"
	"io"
	"os"

	"github.com/sagebench/sagebench/internal/redact"
)

// Every command's stdout and stderr pass through redact.Writer with the
// secrets the command learns as it reads its config (Main creates the
// set; commands add to it through their context): whatever path a
// secret takes to the terminal — a peer's error, a log line, a flag
// echoed in an error — it is masked, in any encoding, and so is the
// password of any URL.

type secretsKey struct{}

// withSecrets returns ctx carrying set.
func withSecrets(ctx context.Context, set *redact.Set) context.Context {
	return context.WithValue(ctx, secretsKey{}, set)
}

// addSecretEnv adds the values of the named environment variables (the
// unset and the empty ones are skipped) to the command's terminal
// redaction.
func addSecretEnv(ctx context.Context, names ...string) {
	set, _ := ctx.Value(secretsKey{}).(*redact.Set)
	if set == nil {
		return
	}
	var vals []string
	for _, n := range names {
		// A value of a few bytes ("1", "x") is no secret, and masking it
		// everywhere would garble the command's whole output.
		if v := os.Getenv(n); n != "" && len(v) >= minTerminalSecret {
			vals = append(vals, v)
		}
	}
	set.Add(vals...)
}

// minTerminalSecret is the shortest value masked on the terminal.
const minTerminalSecret = 6

// terminalOf returns the writer under a redact.Writer (to ask whether
// it is a terminal).
func terminalOf(w io.Writer) io.Writer {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}
