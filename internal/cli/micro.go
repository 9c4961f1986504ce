package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newMicroCmd is replaced by the real command as its issue lands.
func newMicroCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "micro",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("micro: not built yet")
		},
	}
}
