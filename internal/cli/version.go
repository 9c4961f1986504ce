package cli

import (
	"fmt"
	"runtime"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the sagebench version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, commit := record.BuildVersion()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "sagebench %s (commit %s, %s)\n", v, commit, runtime.Version())
			return err
		},
	}
}
