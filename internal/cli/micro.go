package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagebench/sagebench/internal/micro"
)

// microOptions are the flags of `sagebench micro`.
type microOptions struct {
	count     int
	benchtime string
	cpu       int
	filter    string
	names     string
	auto      string
	cache     string
}

func newMicroCmd() *cobra.Command {
	var o microOptions
	cmd := &cobra.Command{
		Use:   "micro fedavg|codec|all",
		Short: "Run the FedAvg and codec microbenchmarks, printing Go benchmark format",
		Long: `Run the microbenchmark cases compiled into this binary (the same bodies as
go test -bench ./internal/micro) and print Go benchmark format, which
sagebench compare/gate and benchstat read. "micro report" tabulates the
output: JSON against zero-copy per dimension, FedAvg against the memory floor.

workers=auto runs with a model of this machine: a short probe (FedAvg itself
at dims 4096 and 8192 with 1…GOMAXPROCS workers over 256 KiB…16 MiB, in
back-to-back paired rounds decided on their median ratios) gives, per dim,
the bytes each worker needs and the worker ceiling; it is cached per CPU, kernel and GOMAXPROCS
(--machine-cache) and logged on stderr. --auto fallback takes the constant
model instead (one worker per 8 MiB).`,
		Example: `  sagebench micro all --count 5 --benchtime 200ms > micro.txt
  sagebench micro fedavg --filter 'clients=512/dim=8192'
  sagebench micro fedavg --names mohawk --filter 'AggregateParallel' --count 10 > new.txt
  sagebench micro report micro.txt`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: micro.Suites,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMicro(cmd, args[0], o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.count, "count", 1, "run each benchmark `N` times")
	f.StringVar(&o.benchtime, "benchtime", "1s", "run each benchmark for duration `D`, or Nx for N iterations")
	f.IntVar(&o.cpu, "cpu", 0, "GOMAXPROCS for the run (`N`; 0 keeps the current value)")
	f.StringVar(&o.filter, "filter", "", "run only benchmarks whose full name (in either naming scheme) matches `REGEX`")
	f.StringVar(&o.auto, "auto", micro.AutoProbe, "how workers=auto resolves: probe (measure this machine once, cached) or fallback (the constant model)")
	f.StringVar(&o.cache, "machine-cache", "", "file the probe is cached in (default: the user cache directory's sagebench/fedavg-machine.json; off: no cache)")
	f.StringVar(&o.names, "names", micro.NamesSagebench, "naming scheme: sagebench, or mohawk for the FedAvg matrix under the Sovereign-Mohawk contract's names (BenchmarkAggregateParallel/clients512_dim8192/workersAuto)")
	cmd.AddCommand(newMicroReportCmd(), newMicroProbeCmd())
	return cmd
}

func runMicro(cmd *cobra.Command, suite string, o microOptions) error {
	if !slices.Contains(micro.Suites, suite) {
		return usageErrorf("micro: unknown suite %q: use fedavg, codec or all", suite)
	}
	if o.count < 1 {
		return usageErrorf("micro: --count %d: must be at least 1", o.count)
	}
	if o.cpu < 0 {
		return usageErrorf("micro: --cpu %d: must be at least 1 (or 0 to keep GOMAXPROCS)", o.cpu)
	}
	opts := micro.Options{Suite: suite, Count: o.count, Benchtime: o.benchtime, CPU: o.cpu, Names: o.names,
		Auto: o.auto, MachineCache: microCachePath(o.cache), Log: cmd.ErrOrStderr()}
	if o.filter != "" {
		re, err := regexp.Compile(o.filter)
		if err != nil {
			return usageErrorf("micro: --filter: %v", err)
		}
		opts.Filter = re
	}
	if err := opts.Validate(); err != nil {
		return usageErrorf("micro: --%v", err)
	}
	err := micro.Run(cmd.Context(), cmd.OutOrStdout(), opts)
	if errors.Is(err, micro.ErrNoMatch) {
		return usageErrorf("micro: --filter: %v", err)
	}
	if err != nil {
		return fmt.Errorf("micro: %w", err)
	}
	return nil
}

// microCachePath is the probe cache file: the flag's value, none for
// "off", else the user cache directory's (none when there is none).
func microCachePath(flag string) string {
	switch flag {
	case "off":
		return ""
	case "":
		dir, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(dir, "sagebench", "fedavg-machine.json")
	}
	return flag
}

func newMicroReportCmd() *cobra.Command {
	var goals bool
	cmd := &cobra.Command{
		Use:   "report [FILE...]",
		Short: "Tabulate micro output: JSON vs zero-copy per dim, FedAvg vs memory floor",
		Long: `Read Go benchmark output of "sagebench micro" or go test -bench (files, or
standard input when none is given) and print markdown tables: for each op and
dimension JSON against zero-copy (mean ± sd ns/op, speedup, allocs, alloc
reduction); for each aggregation shape the best fixed worker count against
the memory floor for the same bytes and workers, and auto against the best.

--goals prints instead one line per goal and shape: auto ÷ best fixed count
(goal <= 1.05, every shape) and best ÷ memory floor by wall and CPU time
(goal <= 1.20 at 512×8192 and 256×8192), each PASS or FAIL, from the medians
of the repetitions. Speed goals need a quiet machine: state its load average.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if goals {
				return runMicroGoals(cmd.InOrStdin(), cmd.OutOrStdout(), args)
			}
			return runMicroReport(cmd.InOrStdin(), cmd.OutOrStdout(), args)
		},
	}
	cmd.Flags().BoolVar(&goals, "goals", false, "print the FedAvg goal ratios with PASS/FAIL instead of the tables")
	return cmd
}

// runMicroGoals prints the goal lines; a goal not met is not an error of
// the tool (exit 0): the lines say FAIL.
func runMicroGoals(stdin io.Reader, stdout io.Writer, files []string) error {
	in, name, done, err := openInputs(stdin, files)
	if err != nil {
		return err
	}
	defer done()
	_, err = micro.WriteGoals(stdout, in, name)
	if errors.Is(err, micro.ErrNoResults) {
		return usageErrorf("micro report --goals: %s: no Aggregate results (feed it sagebench micro fedavg output)", name)
	}
	return err
}

// openInputs joins files (standard input when none) into one reader.
func openInputs(stdin io.Reader, files []string) (io.Reader, string, func(), error) {
	if len(files) == 0 {
		return stdin, "stdin", func() {}, nil
	}
	var readers []io.Reader
	var open []*os.File
	done := func() {
		for _, f := range open {
			f.Close()
		}
	}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			done()
			return nil, "", nil, usageErrorf("micro report: %v", err)
		}
		open = append(open, f)
		// A newline between files, so a last line without one does
		// not run into the next file's first line.
		readers = append(readers, f, strings.NewReader("\n"))
	}
	return io.MultiReader(readers...), files[0], done, nil
}

func runMicroReport(stdin io.Reader, stdout io.Writer, files []string) error {
	in, name, done, err := openInputs(stdin, files)
	if err != nil {
		return err
	}
	defer done()
	err = micro.Report(stdout, in, name)
	if errors.Is(err, micro.ErrNoResults) {
		return usageErrorf("micro report: %s: %v (feed it sagebench micro or go test -bench output)", name, err)
	}
	return err
}
