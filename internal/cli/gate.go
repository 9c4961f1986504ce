package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newGateCmd is replaced by the real command as its issue lands.
func newGateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "gate",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("gate: not built yet")
		},
	}
}
