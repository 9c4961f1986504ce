package cli

import (
	"context"
	"fmt"
)

// readConfig runs read (the parse of a config file) and returns its
// error, or, when ctx ends first (SIGINT, SIGTERM), an interrupted error
// at once: a config within the YAML bounds still takes seconds to decode
// on a loaded machine, and a signal must not wait for it. The parse
// goes on in the background until the process exits.
func readConfig(ctx context.Context, path string, read func() error) error {
	done := make(chan error, 1)
	go func() { done <- read() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return withCode(ExitError, fmt.Errorf("interrupted while reading %s: %w", path, context.Cause(ctx)))
	}
}
