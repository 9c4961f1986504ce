package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagebench/sagebench/internal/redact"
)

// Main runs the sagebench command line with args (without the program name)
// and returns the process exit code. ctx is cancelled on SIGINT/SIGTERM by
// the caller; commands stop work, flush records and return when it is.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var secrets redact.Set // see secrets.go
	out, errOut := redact.NewWriter(stdout, secrets.Known), redact.NewWriter(stderr, secrets.Known)
	defer out.Flush()
	defer errOut.Flush()
	ctx = withSecrets(ctx, &secrets)
	root := newRootCmd()
	var prof profiles
	prof.bind(root)
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetContext(ctx)
	err := root.ExecuteContext(ctx)
	if perr := prof.stop(); err == nil && perr != nil {
		err = withCode(ExitError, perr)
	}
	if err != nil && !errors.Is(err, errSilent) {
		fmt.Fprintf(errOut, "sagebench: %v\n", err)
	}
	if err != nil && isFlagError(err) {
		return ExitUsage
	}
	return exitCode(err)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "sagebench",
		Short:         "System-level benchmark suite for LLM and RAG serving platforms",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageErrorf("%v (see --help)", err)
	})
	root.AddCommand(
		newVersionCmd(),
		newServeCmd(),
		newRunCmd(),
		newCompareCmd(),
		newGateCmd(),
		newBaselineCmd(),
		newGobenchCmd(),
		newMicroCmd(),
		newCalibrateCmd(),
		newCaptureCmd(),
		newReportCmd(),
		newAggregateCmd(),
		newWorkerCmd(),
	)
	return root
}

// isFlagError reports errors cobra raises itself for unknown commands or
// bad arguments before a command runs.
func isFlagError(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") ||
		strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "unknown shorthand flag") ||
		strings.Contains(msg, "arg(s)")
}
