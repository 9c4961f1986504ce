package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newCompareCmd is replaced by the real command as its issue lands.
func newCompareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compare",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("compare: not built yet")
		},
	}
}
