package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newRunCmd is replaced by the real command as its issue lands.
func newRunCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("run: not built yet")
		},
	}
}
