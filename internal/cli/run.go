package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/sagebench/sagebench/internal/catalog"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/run"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
)

// runOptions are the flags of `sagebench run`. Shared-contract flags fill
// a runconfig.Shared; only the flags the user set override the config file.
type runOptions struct {
	experiments []string
	all         bool
	shared      runconfig.Shared
	configPath  string
	dryRun      bool
	verbose     bool

	rate          float64
	totalRequests int
	llmRatio      float64
	duration      time.Duration

	// calibrate measures the harness's floor before each experiment;
	// file and ov are kept to resolve its short calibration run.
	calibrate bool
	cal       calibrateOptions
	file      *runconfig.File
	ov        workload.Overrides
}

const runLong = `Run workloads of the Q1..Q8 catalog against a target and write their records.

Each experiment runs --repeat times (re-seeded from seed+rep) against the
embedded reference stack (default) or an OpenAI-compatible --target URL.
Records go to OUTPUT_DIR/<q>/<run-id>/ (run.json, requests.jsonl,
summary.md, bench.txt) and OUTPUT_DIR/unified_results.{jsonl,csv}.

Configuration: per-Q defaults, then --config YAML (strict), then the flags
you set. --dry-run prints the resolved plan and writes and sends nothing.

Exit codes: 0 ok, 1 error (I/O, unreachable target, interrupted),
2 usage or configuration error, 4 inconclusive (a target's interval
straddles its bound: say what sample would decide), 5 a run was invalid
(the driver could not deliver its schedule; see invalid_reasons in
run.json), 6 a valid run
whose system under test missed a target of its Q (qN.target, or the Q's
own: Q5 recovery_s ≤ 10 and throughput_ratio ≥ 0.9, Q7
failed_by_reconfig ≤ 0, Q8 lost ≤ 0; see result.targets in run.json).`

func newRunCmd() *cobra.Command {
	o := &runOptions{shared: runconfig.DefaultShared()}
	cmd := &cobra.Command{
		Use:     "run -e Q2 [flags]",
		Short:   "Run workloads (Q1..Q8) against a target and record every request",
		Long:    runLong,
		Example: "  sagebench run -e Q2 --quick\n  sagebench run -e q2 --target http://127.0.0.1:8000 --rate 20 --total-requests 200\n  sagebench run --all --dry-run",
		Args:    experimentsByFlag,
		RunE:    func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.bindFlags(cmd.Flags())
	return cmd
}

// experimentsByFlag refuses positional arguments, with a hint when they
// look like experiments (`sagebench run Q2`).
func experimentsByFlag(_ *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if _, err := catalog.Lookup(args[0]); err == nil {
		return usageErrorf("experiments are named with -e: sagebench run -e %s", strings.Join(args, ","))
	}
	return usageErrorf("unexpected argument %q; name experiments with -e (e.g. sagebench run -e Q2)", args[0])
}

func (o *runOptions) bindFlags(f *pflag.FlagSet) {
	s := &o.shared
	f.StringSliceVarP(&o.experiments, "experiment", "e", nil, "experiment(s) to run: Q1..Q8, case-insensitive; repeat or comma-separate")
	f.BoolVarP(&o.all, "all", "a", false, "run every experiment of the catalog this build implements")
	f.StringVarP(&s.Backend, "backend", "b", s.Backend, "runtime backend: sage or ray")
	f.IntVar(&s.Nodes, "nodes", s.Nodes, "worker nodes: Q1's operators, or the load of Q3, Q4 and Q6, run on `N` sagebench worker processes over NATS JetStream")
	f.StringVar(&s.NATSURL, "nats-url", "", "an external NATS cluster for --nodes (default: an embedded server and local workers); credentials from NATS_CREDS, NATS_NKEY, NATS_TOKEN, NATS_USER/NATS_PASSWORD, TLS from NATS_CA, NATS_CERT/NATS_KEY")
	f.BoolVar(&s.NATSInsecure, "nats-insecure", false, "allow --nats-url without credentials (recorded in run.json; anyone on that server could read and publish into the run)")
	f.StringVar(&s.JoinTokenFile, "join-token-file", "", "file (mode 600) holding the join token --nodes workers share (default: generated and printed)")
	f.IntVar(&s.Parallelism, "parallelism", s.Parallelism, "operator parallelism")
	f.StringVar(&s.Pacer, "pacer", "", "how the driver waits for arrivals: efficient (default: the runtime timer above ~1,000 req/s) or precise (lower schedule lag, more CPU per request)")
	f.IntVar(&s.Repeat, "repeat", s.Repeat, "independent repetitions, each re-seeded from seed+rep")
	f.Int64Var(&s.Seed, "seed", s.Seed, "seed: same seed → same schedule and request mix")
	f.StringVar(&s.OutputDir, "output-dir", s.OutputDir, "artefact root")
	f.BoolVar(&s.Quick, "quick", false, "reduced-scale smoke run (every scale knob shrinks)")
	f.BoolVar(&o.dryRun, "dry-run", false, "validate and print the resolved plan; write and send nothing")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "debug output on stderr")
	f.StringVarP(&o.configPath, "config", "c", "", "YAML config (strict; ${VAR} and ${VAR:-default} expanded)")
	f.StringVar(&s.Target.URL, "target", s.Target.URL, `"embedded" or an OpenAI-compatible base URL`)
	f.StringVar(&s.Ray.Address, "ray-address", "", "--backend ray: the cluster's dashboard URL, e.g. http://127.0.0.1:8265 (default $RAY_ADDRESS; token from $RAY_AUTH_TOKEN)")
	f.Float64Var(&o.rate, "rate", 0, "workload: arrival rate, req/s")
	f.IntVar(&o.totalRequests, "total-requests", 0, "workload: requests per sub-run")
	f.Float64Var(&o.llmRatio, "llm-ratio", 0, "workload: fraction of LLM requests (Q2)")
	f.DurationVar(&o.duration, "duration", 0, "workload: length of each sub-run (count follows from rate unless --total-requests is set)")
	f.BoolVar(&o.calibrate, "calibrate", false, "measure the harness's own error at each experiment's rate and mix first (sagebench calibrate) and record it as the run's floor")
	o.cal.bind(f, false)
}

func (o *runOptions) run(cmd *cobra.Command) error {
	specs, err := o.selectSpecs()
	if err != nil {
		return err
	}
	resolved, err := o.resolve(cmd, specs)
	if err != nil {
		return err
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if o.dryRun {
		return o.printPlans(cmd.Context(), stdout, specs, resolved)
	}
	if len(resolved) == 0 {
		return usageErrorf("none of the selected experiments is implemented in this build")
	}
	most, err := preflight(resolved)
	if err != nil {
		return err
	}
	root := resolved[0].Shared.OutputDir
	_, statErr := os.Stat(root)
	if err := checkOutputDir(root, most); err != nil {
		return usageErrorf("%v", err)
	}
	err = o.execute(cmd.Context(), stdout, stderr, resolved)
	if err != nil && statErr != nil {
		_ = os.Remove(root) // created for this run; removed only while empty (a run that never started)
	}
	return err
}

// selectSpecs resolves -e/--all into catalog entries.
func (o *runOptions) selectSpecs() ([]workload.Spec, error) {
	switch {
	case o.all && len(o.experiments) > 0:
		return nil, usageErrorf("-e/--experiment and -a/--all conflict; give one of them")
	case !o.all && len(o.experiments) == 0:
		return nil, usageErrorf("no experiment: give -e Q1..Q8 (e.g. -e Q2) or --all")
	}
	specs, err := catalog.Select(o.experiments, o.all)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return specs, nil
}

// resolve applies defaults → config file → set flags to every spec.
// With --all, Qs not implemented are skipped (reported); with -e they are
// an error.
func (o *runOptions) resolve(cmd *cobra.Command, specs []workload.Spec) ([]runconfig.Resolved, error) {
	shared := runconfig.DefaultShared()
	var file *runconfig.File
	if o.configPath != "" {
		if err := readConfig(cmd.Context(), o.configPath, func() error {
			f, err := runconfig.LoadFile(o.configPath, &shared, os.LookupEnv)
			if err != nil {
				return usageErrorf("%v", err)
			}
			file = f
			return nil
		}); err != nil {
			return nil, err
		}
	}
	o.applySharedFlags(cmd.Flags(), &shared)
	if err := o.checkWorkloadFlags(cmd.Flags()); err != nil {
		return nil, err
	}
	adminEnv := shared.Target.AdminTokenEnv
	if adminEnv == "" {
		adminEnv = target.DefaultAdminTokenEnv
	}
	addSecretEnv(cmd.Context(), shared.Target.APIKeyEnv, adminEnv, "RAY_AUTH_TOKEN", "RAY_PROXY_AUTHORIZATION", "NATS_TOKEN", "NATS_PASSWORD")
	ov := o.overrides(cmd.Flags())
	tok := tokenizer.RefFor(shared.Tokenizer) // one parse for every Q of the command
	o.file, o.ov = file, ov
	var out []runconfig.Resolved
	var skipped []string
	for _, spec := range specs {
		if !spec.Implemented() && (o.all || o.dryRun) {
			skipped = append(skipped, spec.ID)
			continue
		}
		r, ignored, err := runconfig.ResolveIn(spec, shared, file, ov, tok)
		if errors.Is(err, runconfig.ErrNotImplemented) {
			return nil, usageErrorf("%s: %v (implemented: %s)", spec.ID, err, strings.Join(catalog.Implemented(), ", "))
		}
		if err != nil {
			return nil, usageErrorf("%s: %v", spec.ID, err)
		}
		for _, name := range ignored {
			fmt.Fprintf(cmd.ErrOrStderr(), "sagebench: --%s does not apply to %s; ignored\n", name, spec.ID)
		}
		for _, key := range runconfig.StackOnlySet(r, file) {
			fmt.Fprintf(cmd.ErrOrStderr(), "sagebench: warning: %s: %s configures the embedded reference stack only; the target %s ignores it (docs/run.md#keys-by-target)\n",
				spec.ID, key, target.Describe(r.Shared.Target.URL))
		}
		out = append(out, r)
	}
	for _, note := range file.Deprecated() { // after the checks: a bad file's error stays one line
		fmt.Fprintln(cmd.ErrOrStderr(), "sagebench:", note)
	}
	if o.all && !o.dryRun && len(skipped) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "sagebench: skipping %s: not implemented in this build yet\n", strings.Join(skipped, ", "))
	}
	return out, nil
}

func (o *runOptions) applySharedFlags(f *pflag.FlagSet, s *runconfig.Shared) {
	set := func(name string, apply func()) {
		if f.Changed(name) {
			apply()
		}
	}
	set("backend", func() { s.Backend = o.shared.Backend })
	set("nodes", func() { s.Nodes = o.shared.Nodes })
	set("nats-url", func() { s.NATSURL = o.shared.NATSURL })
	set("nats-insecure", func() { s.NATSInsecure = o.shared.NATSInsecure })
	set("join-token-file", func() { s.JoinTokenFile = o.shared.JoinTokenFile })
	set("parallelism", func() { s.Parallelism = o.shared.Parallelism })
	set("pacer", func() { s.Pacer = o.shared.Pacer })
	set("repeat", func() { s.Repeat = o.shared.Repeat })
	set("seed", func() { s.Seed = o.shared.Seed })
	set("output-dir", func() { s.OutputDir = o.shared.OutputDir })
	set("quick", func() { s.Quick = o.shared.Quick })
	set("target", func() { s.Target.URL = o.shared.Target.URL })
	set("ray-address", func() { s.Ray.Address = o.shared.Ray.Address })
	if s.Ray.Address == "" && s.Backend == runconfig.BackendRay {
		s.Ray.Address = os.Getenv("RAY_ADDRESS")
	}
	s.Ray.Token = os.Getenv("RAY_AUTH_TOKEN")
	s.Ray.ProxyAuth = os.Getenv("RAY_PROXY_AUTHORIZATION")
}

// checkWorkloadFlags refuses a workload flag no experiment can take,
// naming the flag as the user typed it (a Q's own check would name its
// config key instead, e.g. q2.schedule.rate).
func (o *runOptions) checkWorkloadFlags(f *pflag.FlagSet) error {
	switch {
	case f.Changed("rate") && !(o.rate >= 0 && !math.IsInf(o.rate, 0)):
		return usageErrorf("--rate %v: want a finite number of requests per second, at least 0, e.g. --rate 20", o.rate)
	case f.Changed("total-requests") && o.totalRequests < 0:
		return usageErrorf("--total-requests %d: want a count of requests, at least 0", o.totalRequests)
	case f.Changed("llm-ratio") && !(o.llmRatio >= 0 && o.llmRatio <= 1):
		return usageErrorf("--llm-ratio %v: want a fraction from 0 to 1, e.g. --llm-ratio 0.7", o.llmRatio)
	case f.Changed("duration") && o.duration < 0:
		return usageErrorf("--duration %v: want a duration of at least 0, e.g. --duration 30s", o.duration)
	}
	return nil
}

func (o *runOptions) overrides(f *pflag.FlagSet) workload.Overrides {
	var ov workload.Overrides
	if f.Changed("rate") {
		ov.Rate = &o.rate
	}
	if f.Changed("total-requests") {
		ov.TotalRequests = &o.totalRequests
	}
	if f.Changed("llm-ratio") {
		ov.LLMRatio = &o.llmRatio
	}
	if f.Changed("duration") {
		ov.Duration = &o.duration
	}
	return ov
}

// preflight builds every repetition's schedule and reads the embedded
// stack's config before any traffic: input that cannot be used is a usage
// error, found before a target starts or a run directory exists. It
// returns the most requests one repetition plans (the largest
// requests.jsonl a run will write).
func preflight(resolved []runconfig.Resolved) (most int, err error) {
	for _, r := range resolved {
		if err := r.Shared.Runnable(); err != nil {
			return 0, usageErrorf("%s: %v", r.Spec.ID, err)
		}
		if tc := r.Shared.Target; tc.IsEmbedded() && tc.StackConfig != "" {
			if _, err := stack.LoadConfig(tc.StackConfig); err != nil {
				return 0, usageErrorf("target.stack_config %s: %v", tc.StackConfig, err)
			}
		}
		for rep := range r.Shared.Repeat {
			p, err := r.Workload.Plan(r.Shared.Seed + int64(rep))
			if err != nil {
				return 0, usageErrorf("%s: %v", r.Spec.ID, err)
			}
			n := 0
			for _, ph := range p.Phases {
				n += ph.Requests
			}
			most = max(most, n)
		}
	}
	return most, nil
}

// checkOutputDir makes sure records of the planned size can be written
// before any traffic: a write of that size is tried (a nearly full disk
// fails here, not after minutes of traffic).
func checkOutputDir(dir string, requests int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output dir %s is not usable: %v; choose another with --output-dir", dir, err)
	}
	if err := record.CheckWritable(dir, record.RecordBytes(requests)); err != nil {
		return fmt.Errorf("%v; free space or choose another with --output-dir", err)
	}
	return nil
}

// execute runs every resolved experiment and maps the outcome to an exit code.
func (o *runOptions) execute(ctx context.Context, stdout, stderr io.Writer, resolved []runconfig.Resolved) error {
	rn, log := newRunner(stdout, stderr, o.verbose)
	var invalid, missed, undecided []string
	for _, r := range resolved {
		rn.Dataflow = distributed(r.Shared, log, stderr)
		rn.Fleet = loadFleet(r.Spec, r.Shared, log, stderr)
		r, err := calibrateServer(ctx, rn, r, stdout)
		if err != nil {
			return err
		}
		if o.calibrate {
			floor, err := o.measureFloor(ctx, r)
			if err != nil {
				return withCode(ExitError, err)
			}
			rn.Floor = &floor
		}
		results, err := rn.Run(ctx, r)
		warnMisses(r, stderr)
		for _, res := range results {
			if !res.Run.Valid && res.Run.Complete {
				invalid = append(invalid, fmt.Sprintf("%s (%s)", res.Run.RunID, strings.Join(res.Run.InvalidReasons, "; ")))
			}
			if res.Run.Valid && res.Run.Result != nil && res.Run.Result.Missed() {
				missed = append(missed, fmt.Sprintf("%s (%s)", res.Run.RunID, targetsOf(res.Run.Result, result.Missed)))
			}
			if res.Run.Valid && res.Run.Result != nil && res.Run.Result.Inconclusive() {
				undecided = append(undecided, fmt.Sprintf("%s (%s)", res.Run.RunID, targetsOf(res.Run.Result, result.Inconclusive)))
			}
		}
		if err != nil {
			return withCode(runErrCode(err), err)
		}
	}
	if len(invalid) > 0 {
		fmt.Fprintf(stderr, "sagebench: invalid run: %s\n", strings.Join(invalid, ", "))
		return silentExit(ExitInvalidRun)
	}
	if len(missed) > 0 {
		fmt.Fprintf(stderr, "sagebench: target missed: %s\n", strings.Join(missed, ", "))
		return silentExit(ExitTargetMissed)
	}
	if len(undecided) > 0 {
		fmt.Fprintf(stderr, "sagebench: target inconclusive: %s\n", strings.Join(undecided, ", "))
		return silentExit(ExitInconclusive)
	}
	return nil
}

// newRunner is the runner of `run` (and of the runs `paper` makes): it
// prints to stdout, logs to stderr when verbose (the returned writer).
func newRunner(stdout, stderr io.Writer, verbose bool) (*run.Runner, io.Writer) {
	log := io.Discard
	if verbose {
		log = stderr
	}
	return &run.Runner{Out: stdout, Log: log, Start: embeddedStarter(log),
		Live: isTerminal(stdout), ProgressEvery: 5 * time.Second, Env: record.CollectEnvironment()}, log
}

// targetsOf lists the reasons of the targets of res judged o.
func targetsOf(res *result.Result, o result.Outcome) string {
	var out []string
	for _, v := range res.Targets {
		if v.Outcome == o {
			out = append(out, v.Reason)
		}
	}
	return strings.Join(out, "; ")
}

// runErrCode maps a run's error to its exit code: a model the target
// does not serve is a configuration error; an unreachable target, I/O or
// an interruption is a tool error.
func runErrCode(err error) int {
	var ume *target.UnknownModelError
	if errors.As(err, &ume) {
		return ExitUsage
	}
	return ExitError
}

// isTerminal reports whether w is a terminal (for the live progress line).
func isTerminal(w io.Writer) bool {
	f, ok := terminalOf(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
