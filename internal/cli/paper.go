package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagebench/sagebench/internal/paper"
	"github.com/sagebench/sagebench/internal/runconfig"
)

// paperOptions are the flags of `sagebench paper`.
type paperOptions struct {
	from    string
	out     outputFlag
	quick   bool
	dryRun  bool
	verbose bool
	// allowMissing renders a figure or table without some of its samples
	// (a configuration or seed with no run) and exits 0.
	allowMissing bool
}

const paperLong = `Paper makes a paper's figures and tables from an experiment file (strict
YAML: which Qs, run config files, scales, backends, seeds and repetitions;
see config/paper/sagebench.yaml and docs/paper.md).

It matches the runs already under the experiment's results root by
configuration and seed, runs the missing ones through the same runner as
sagebench run, pools each configuration's valid repetitions (mean ± the
Student t interval, as sagebench aggregate computes it) and writes, under
the output directory:

  figures/qN-answer-{column,page}.{svg,pdf}   each Q's answer figure
  tables/qN-summary.{tex,md}                  per configuration: n, the
                                              primary metric and run-level metrics
  tables/qN-<table>.{tex,md}                  the Q's answer table, pooled
  manifest.json                               every file with its sha256,
                                              run IDs and config hashes

--from RESULTS renders saved results only (nothing runs); --quick puts
every configuration at its quick scale. Rendering the same runs twice
writes the same bytes. The output directory is created. A figure or table
that lacks samples (a configuration or seed of the experiment with no
run) is still written, named in manifest.json's "missing", and the command
exits 4 unless --allow-missing.

Exit codes: 0 ok, 1 error, 2 bad experiment file or flag (or no run to
render), 4 samples missing (the files are still written; --allow-missing:
0), 5 a run made now was invalid (the files are still written).`

func newPaperCmd() *cobra.Command {
	var o paperOptions
	cmd := &cobra.Command{
		Use:   "paper EXPERIMENT.yaml [--from RESULTS] [-o DIR]",
		Short: "Make a paper's figures (SVG, PDF) and tables (LaTeX, Markdown) from an experiment file, running what is missing",
		Long:  paperLong,
		Example: `  sagebench paper config/paper/sagebench.yaml
  sagebench paper config/paper/sagebench.yaml --quick --from results -o paper-quick
  sagebench paper config/paper/sagebench.yaml --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPaper(cmd, o, args[0]) },
	}
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "render the runs under this results root only; run nothing")
	o.out.bind(f, "the experiment's output", "directory to write figures, tables and manifest.json into")
	f.BoolVar(&o.quick, "quick", false, "every configuration at its quick scale")
	f.BoolVar(&o.dryRun, "dry-run", false, "say which runs exist and which would run; write nothing")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "debug output of the runs on stderr")
	f.BoolVar(&o.allowMissing, "allow-missing", false, "exit 0 when figures and tables lack samples (configurations or seeds with no run)")
	return cmd
}

func runPaper(cmd *cobra.Command, o paperOptions, experiment string) error {
	out, err := o.out.path()
	if err != nil {
		return err
	}
	if out == o.out.def {
		out = ""
	}
	made := false // out created here: removed again, while empty, on a usage error (as run does)
	if out != "" && !o.dryRun {
		_, statErr := os.Stat(out)
		if err := makeDir(out); err != nil {
			return err
		}
		made = statErr != nil
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	cfg := paper.Config{Experiment: experiment, From: o.from, Out: out, Quick: o.quick, DryRun: o.dryRun, Log: stderr,
		Run: paperRun(stdout, stderr, o.verbose)}
	res, err := paper.Make(cmd.Context(), cfg)
	var ue *paper.UsageError
	switch {
	case errors.As(err, &ue):
		if made {
			_ = os.Remove(out)
		}
		return usageErrorf("paper: %v", ue)
	case err != nil:
		if ee := (*exitError)(nil); errors.As(err, &ee) {
			return err
		}
		return withCode(runErrCode(err), err)
	case o.dryRun:
		return nil
	}
	fmt.Fprintf(stdout, "wrote %d files and %s into %s (%d runs made now)\n", len(res.Manifest.Files), paper.ManifestName, res.Out, len(res.Ran))
	for _, m := range res.Manifest.Missing {
		fmt.Fprintf(stderr, "sagebench: paper: no run for %s: the figures and tables are drawn without them\n", m)
	}
	if len(res.Invalid) > 0 {
		fmt.Fprintf(stderr, "sagebench: invalid run: %s (left out of the estimates)\n", strings.Join(res.Invalid, ", "))
		return silentExit(ExitInvalidRun)
	}
	if len(res.Manifest.Missing) > 0 && !o.allowMissing {
		fmt.Fprintf(stderr, "sagebench: paper: %d configuration(s) lack samples: run them, or pass --allow-missing to ship the figures without them\n", len(res.Manifest.Missing))
		return silentExit(ExitInconclusive)
	}
	return nil
}

// paperRun runs one configuration as `sagebench run` does: checked
// before any traffic, its output root created, the same runner.
func paperRun(stdout, stderr io.Writer, verbose bool) paper.RunFunc {
	rn, log := newRunner(stdout, stderr, verbose)
	return func(ctx context.Context, r runconfig.Resolved) error {
		most, err := preflight([]runconfig.Resolved{r})
		if err != nil {
			return err
		}
		if err := checkOutputDir(r.Shared.OutputDir, most); err != nil {
			return usageErrorf("%v", err)
		}
		rn.Dataflow = distributed(r.Shared, log, stderr)
		rn.Fleet = loadFleet(r.Spec, r.Shared, log, stderr)
		if r, err = calibrateServer(ctx, rn, r, stdout); err != nil {
			return err
		}
		_, err = rn.Run(ctx, r)
		warnMisses(r, stderr)
		return err
	}
}
