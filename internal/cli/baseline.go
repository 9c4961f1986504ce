package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newBaselineCmd is replaced by the real command as its issue lands.
func newBaselineCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "baseline",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("baseline: not built yet")
		},
	}
}
