package cli

import (
	"io"

	"github.com/sagebench/sagebench/internal/target"
)

// embeddedStarter returns how this build starts the embedded reference
// stack; nil until the stack is wired in.
func embeddedStarter(log io.Writer) target.Starter {
	_ = log
	return nil
}
