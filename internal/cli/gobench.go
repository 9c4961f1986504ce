package cli

import (
	"errors"
	"fmt"

	"github.com/sagebench/sagebench/internal/gobench"
	"github.com/spf13/cobra"
)

func newGobenchCmd() *cobra.Command {
	var cfg gobench.Config
	var g gateOptions
	cmd := &cobra.Command{
		Use:   "gobench --base-ref REF [flags]",
		Short: "Benchmark a git base ref against the working tree of a Go module, then gate",
		Long: `Gobench checks out --base-ref in a temporary git worktree (removed on exit, also
on error or interrupt), compiles the test binaries of base and working tree
(go test -c), checks the --expect symbols exist in both (-test.list), runs the
benchmarks interleaved (base, current, base, current … --count rounds) so that
machine drift hits both, then compares and gates like 'sagebench gate'.
The defaults are the benchmark contract's: --benchtime 300ms, --count 10,
--cpu 2, --alpha 0.01; each flag overrides its default.

It writes a Markdown report (--report; base ref, benchtime, count, alpha, UTC
time, Go version, OS/CPU, the comparison, the verdict) and the raw outputs next
to it (<report>.base.txt, <report>.current.txt).

The worktree must be clean unless --allow-dirty. Exit codes as for gate:
0 pass, 3 regression, 4 inconclusive, 2 usage error (bad ref, dirty tree),
1 tool error (build failure, interrupted).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("count") && cfg.Count < 1 {
				return usageErrorf("gobench: --count %d: want at least 1", cfg.Count)
			}
			p, err := g.policy(cmd)
			if err != nil {
				return err
			}
			cfg.Policy = p
			cfg.Log = cmd.ErrOrStderr()
			res, err := gobench.Run(cmd.Context(), cfg)
			var ie *gobench.InputError
			switch {
			case errors.As(err, &ie):
				return usageErrorf("%v", err)
			case err != nil:
				return withCode(ExitError, fmt.Errorf("gobench: %w", err))
			}
			if err := gateWriteOutcome(cmd.OutOrStdout(), res.Outcome, g.format); err != nil {
				return withCode(ExitError, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "gobench: report %s, raw outputs %s %s\n", res.ReportPath, res.BasePath, res.CurrentPath)
			return silentExit(gateExitCode(res.Outcome.Verdict))
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.BaseRef, "base-ref", "", "git ref to compare against, e.g. origin/main or HEAD~1 (required)")
	f.StringVar(&cfg.Dir, "dir", ".", "module directory")
	f.StringVar(&cfg.Pkg, "pkg", "./...", "packages to benchmark")
	f.StringVar(&cfg.Bench, "bench", ".", "benchmarks to run (regexp, as go test -bench)")
	f.IntVar(&cfg.Count, "count", 10, "interleaved rounds (samples per side)")
	f.StringVar(&cfg.Benchtime, "benchtime", "300ms", "time or NNNx per benchmark run")
	f.StringVar(&cfg.CPU, "cpu", "2", "GOMAXPROCS list passed as -test.cpu (e.g. 1,2,4)")
	f.StringArrayVar(&cfg.Expect, "expect", nil, "benchmark that must exist on both sides: BenchmarkX, BenchmarkX/sub-2 or the prefix BenchmarkX/ (repeatable)")
	f.StringVar(&cfg.Report, "report", "gobench-report.md", "Markdown report path")
	f.BoolVar(&cfg.AllowDirty, "allow-dirty", false, "measure a worktree with uncommitted changes")
	f.StringVar(&g.policyFile, "policy", "", "gate policy YAML")
	f.Float64Var(&g.alpha, "alpha", 0.01, "significance level (overrides the policy)")
	f.Float64Var(&g.threshold, "threshold", 5, "geomean regression threshold in percent (overrides the policy)")
	f.StringVar(&g.format, "format", "text", "output format: text|markdown|json")
	return cmd
}
