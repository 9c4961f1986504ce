package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagebench/sagebench/internal/leaderboard"
)

// aggregateOptions are the flags of `sagebench aggregate`.
type aggregateOptions struct {
	format string
	lb     leaderboard.Options
}

func newAggregateCmd() *cobra.Command {
	var o aggregateOptions
	cmd := &cobra.Command{
		Use:   "aggregate RESULTS_DIR",
		Short: "Leaderboard across runs: unified_results grouped per configuration, mean ± CI, backends compared",
		Long: `Aggregate reads every unified_results.jsonl under RESULTS_DIR, keeps one row
per run_id, and groups the valid runs by workload, backend, nodes,
parallelism and config_hash with the mean and a t confidence interval over
repetitions. Invalid runs (and rows without recorded validity) are listed
apart and never averaged in. Backends that ran the same workload, shape and
seeds are compared with a Welch t-test.

Unreadable lines are listed on stderr and make the exit code 2 even though
the leaderboard is printed.`,
		Example: `  sagebench aggregate results
  sagebench aggregate results --format csv > leaderboard.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAggregate(cmd, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "markdown", "output format: "+strings.Join(leaderboard.Formats, "|"))
	f.Float64Var(&o.lb.Confidence, "confidence", 0.95, "confidence level of the intervals")
	f.Float64Var(&o.lb.Alpha, "alpha", 0.05, "significance level of the backend comparison")
	return cmd
}

func runAggregate(cmd *cobra.Command, o aggregateOptions, root string) error {
	if !compareFormatIn(o.format, leaderboard.Formats) {
		return usageErrorf("aggregate: --format %q: want one of %s", o.format, strings.Join(leaderboard.Formats, ", "))
	}
	if err := o.lb.Validate(); err != nil {
		return usageErrorf("aggregate: %v", err)
	}
	c, err := leaderboard.Collect(root)
	if err != nil {
		return usageErrorf("aggregate: %v", err)
	}
	b, err := leaderboard.Build(c, o.lb)
	if err != nil {
		return usageErrorf("aggregate: %v", err)
	}
	if err := b.Write(cmd.OutOrStdout(), o.format); err != nil {
		return withCode(ExitError, err)
	}
	for _, p := range c.Problems {
		fmt.Fprintf(cmd.ErrOrStderr(), "sagebench: %s\n", p)
	}
	if len(c.Problems) > 0 {
		return usageErrorf("aggregate: %d unreadable lines or files (listed above); the leaderboard leaves them out", len(c.Problems))
	}
	return nil
}
