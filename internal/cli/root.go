package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
		return usageErrorf("%v (see --help)", flagError(err))
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
		newPaperCmd(),
		newWorkerCmd(),
		newTokenizeCmd(),
	)
	return root
}

// flagError rewrites a flag value pflag could not parse as the flag, the
// value and what it takes, without the parser's internals
// (strconv.ParseInt: parsing "abc": invalid syntax).
func flagError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return err
	}
	f := iv.GetFlag()
	return fmt.Errorf("--%s %q: want %s", f.Name, iv.GetValue(), flagValueKind(f.Value.Type()))
}

// flagValueKind says in words what a flag of pflag type typ takes.
func flagValueKind(typ string) string {
	switch typ {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number, e.g. 42"
	case "float32", "float64":
		return "a number, e.g. 20 or 0.5"
	case "duration":
		return "a duration with its unit, e.g. 30s, 500ms or 2m"
	case "bool":
		return "true or false"
	case "intSlice", "int64Slice", "uintSlice":
		return "whole numbers, comma-separated or the flag repeated"
	case "float64Slice", "float32Slice":
		return "numbers, comma-separated or the flag repeated"
	case "durationSlice":
		return "durations with their units (e.g. 30s), comma-separated"
	}
	return "a valid " + typ
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
