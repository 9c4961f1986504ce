package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newGobenchCmd is replaced by the real command as its issue lands.
func newGobenchCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "gobench",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("gobench: not built yet")
		},
	}
}
