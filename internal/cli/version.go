package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the sagebench version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, commit := buildVersion()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "sagebench %s (commit %s)\n", v, commit)
			return err
		},
	}
}

// buildVersion returns the module version and VCS revision embedded by the
// Go toolchain, or "devel"/"unknown" when they are absent.
func buildVersion() (version, commit string) {
	version, commit = "devel", "unknown"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version, commit
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		version = v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			commit = s.Value
		}
	}
	return version, commit
}
