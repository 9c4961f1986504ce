package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sagebench/sagebench/internal/calibrate"
	"github.com/sagebench/sagebench/internal/presenter"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// calibrateOptions are the exact server's answers and the length of each
// calibration phase.
type calibrateOptions struct {
	server  calibrate.Config
	seconds time.Duration
	format  string
}

// bind adds the calibration flags; own is true for `sagebench calibrate`,
// false for the same knobs on `run --calibrate`.
func (c *calibrateOptions) bind(f *pflag.FlagSet, own bool) {
	prefix := "calibrate-"
	if own {
		prefix = ""
	}
	f.DurationVar(&c.server.TTFT, prefix+"ttft", 50*time.Millisecond, "calibration: the exact server's time to first token")
	f.DurationVar(&c.server.ITL, prefix+"itl", 10*time.Millisecond, "calibration: the exact server's time between tokens")
	f.DurationVar(&c.server.EmbedLatency, prefix+"embed-latency", 5*time.Millisecond, "calibration: the exact server's embeddings latency")
	f.DurationVar(&c.seconds, prefix+"phase", 5*time.Second, "calibration: length of each phase of the workload's plan")
}

const calibrateLong = `Measure the harness's own error at a workload's rate and mix.

The workload's plan (its rate and request mix, each phase cut to --phase)
is driven through the same client, driver and records as a run, against
an in-process server that answers at exact times: the first token --ttft
after the request arrives, each next one --itl later, embeddings after
--embed-latency. The floor is measured minus true TTFT, ITL and E2E
(median, p99, max) and the delivered-rate error. Nothing is written.

Exit codes: 0 ok (the table says whether the goal was met), 1 error,
2 usage or configuration error.`

func newCalibrateCmd() *cobra.Command {
	o := &runOptions{shared: runconfig.DefaultShared()}
	cmd := &cobra.Command{
		Use:     "calibrate -e Q2 [flags]",
		Short:   "Measure the harness's own error (the measurement floor) at a workload's rate and mix",
		Long:    calibrateLong,
		Example: "  sagebench calibrate -e Q2 --quick\n  sagebench calibrate -e Q2 --rate 2000 --format json",
		Args:    experimentsByFlag,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.runCalibrate(cmd)
		},
	}
	o.bindFlags(cmd.Flags())
	for _, name := range []string{"calibrate", "calibrate-ttft", "calibrate-itl", "calibrate-embed-latency", "calibrate-phase", "dry-run", "repeat", "output-dir"} {
		cmd.Flags().MarkHidden(name)
	}
	o.cal.bind(cmd.Flags(), true)
	cmd.Flags().StringVar(&o.cal.format, "format", "text", "output: text or json")
	cmd.AddCommand(newCalibrateServeCmd(), newCalibrateGradeCmd())
	return cmd
}

func (o *runOptions) runCalibrate(cmd *cobra.Command) error {
	if o.cal.format != "text" && o.cal.format != "json" {
		return usageErrorf("--format %q: choose text or json", o.cal.format)
	}
	specs, err := o.selectSpecs()
	if err != nil {
		return err
	}
	resolved, err := o.resolve(cmd, specs)
	if err != nil {
		return err
	}
	var floors []record.Floor
	for _, r := range resolved {
		f, err := o.measureFloor(cmd.Context(), r)
		if err != nil {
			return withCode(ExitError, err)
		}
		floors = append(floors, f)
	}
	if o.cal.format == "json" {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(floors)
	}
	for _, f := range floors {
		printFloor(cmd.OutOrStdout(), f)
	}
	return nil
}

// measureFloor resolves r's calibration run (each phase cut to the
// calibration length) and measures it against the exact server.
func (o *runOptions) measureFloor(ctx context.Context, r runconfig.Resolved) (record.Floor, error) {
	if err := o.cal.server.Validate(); err != nil {
		return record.Floor{}, usageErrorf("%v", err)
	}
	ov := o.ov
	d := o.cal.seconds
	ov.Duration, ov.TotalRequests = &d, nil
	shared, tok := r.Shared, r.Tokenizer
	if _, err := tok.Get(); errors.Is(err, tokenizer.ErrNotCalibrated) {
		// the floor is timed against its own exact server, which has no
		// /tokenize: any count serves, the default's
		shared.Tokenizer, tok = "", tokenizer.RefFor("")
	}
	short, _, err := runconfig.ResolveIn(r.Spec, shared, o.file, ov, tok)
	if err != nil {
		return record.Floor{}, usageErrorf("%s calibration: %v", r.Spec.ID, err)
	}
	return calibrate.Measure(ctx, short, o.cal.server)
}

func printFloor(w io.Writer, f record.Floor) {
	fmt.Fprintf(w, "%s measurement floor — %s; load average %.1f\n", f.Workload, f.Source, f.LoadAvg1)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "error (measured − true)\tn\tfailed\tmedian ms\tmedian %\tp99 ms\tmax ms\t")
	for _, row := range presenter.FloorRows(&f, "server lateness") { // a failed request counts +∞
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintf(w, "delivered %.2f of %.2f req/s (%+.2f %%); %d ok, %d failed\n", f.DeliveredRate, f.TargetRate, f.RateErrorPct, f.Requests, f.Failed)
	fmt.Fprintf(w, "goal (%s): %s\n", f.Goal, metNot(f.GoalMet))
	for _, n := range f.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func metNot(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
