package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sagebench/sagebench/internal/capture"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/redact"
)

// captureOptions are the flags of `sagebench capture`.
type captureOptions struct {
	targets   []string
	prom      string
	queries   []string
	windows   int
	window    time.Duration
	interval  time.Duration
	timeout   time.Duration
	quick     bool
	match     []string
	labels    []string
	maxSeries int
	processes []string
	pids      []int
	out       outputFlag
}

func newCaptureCmd() *cobra.Command {
	var o captureOptions
	cmd := &cobra.Command{
		Use:   "capture --target URL [flags]",
		Short: "Stress capture: scrape Prometheus exporters over windows into capture.json and capture.md",
		Long: `Capture scrapes one or more Prometheus exporters (text or OpenMetrics) at
the start and every --interval for --windows windows of --window each. Per
window and series it records start and end value, the delta with counter
resets handled and the rate; histograms get p50/p95/p99 per window
(histogram_quantile semantics); per series across windows the mean, median,
min, max, p95 and p99 of the window rates (gauges: of the window means) and
the total delta. --process/--pid add a /proc snapshot (CPU %, RSS, open
files) sampled on the same ticks.

With --prometheus URL and --query EXPR, a Prometheus server is queried
instead (/api/v1/query_range over the last windows × window, one step per
interval, no waiting); each query is one target of the capture.

A dead exporter marks its windows missing and the capture goes on; the exit
code is 1 only when every scrape failed. Both files are written even then.`,
		Example: `  sagebench capture --target http://127.0.0.1:8080/metrics --windows 3 --window 5s
  sagebench capture --target http://127.0.0.1:8080/metrics --quick --match 'gateway_.*' --process sagebench
  sagebench capture --prometheus http://127.0.0.1:9090 --query 'sum(rate(http_requests_total[1m]))' --window 1m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCapture(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.targets, "target", nil, "exporter `URL` to scrape (repeatable)")
	f.StringVar(&o.prom, "prometheus", "", "query this Prometheus server `URL` instead (the last windows × window, ending now)")
	f.StringArrayVar(&o.queries, "query", nil, "PromQL `EXPR` to evaluate with --prometheus (repeatable)")
	f.IntVar(&o.windows, "windows", capture.DefaultWindows, "number of windows `N`")
	f.DurationVar(&o.window, "window", capture.DefaultWindow, "length of one window")
	f.DurationVar(&o.interval, "interval", 0, "scrape period inside a window (default 5s, at most half the window)")
	f.DurationVar(&o.timeout, "timeout", 0, "timeout of one scrape (default the interval, 1s to 10s)")
	f.BoolVar(&o.quick, "quick", false, "3 windows of 10s, a scrape every second (overrides --windows, --window, --interval)")
	f.StringArrayVar(&o.match, "match", nil, "keep metric names matching `REGEX` (whole name; repeatable)")
	f.StringArrayVar(&o.labels, "label", nil, "keep series whose labels match `NAME=V|NAME!=V|NAME=~RE|NAME!~RE` (repeatable)")
	f.IntVar(&o.maxSeries, "max-series", capture.DefaultMaxSeries, "cardinality cap: a scrape keeping more series fails")
	f.StringArrayVar(&o.processes, "process", nil, "snapshot processes with this `NAME` (/proc/PID/comm; repeatable)")
	f.IntSliceVar(&o.pids, "pid", nil, "snapshot this process `ID` (repeatable)")
	o.out.bind(f, ".", "`DIR` to write capture.json and capture.md into, created if absent")
	return cmd
}

func (o captureOptions) config(progress io.Writer) capture.Config {
	cfg := capture.Config{Targets: o.targets, Prometheus: o.prom, Queries: o.queries, Windows: o.windows, Window: o.window, Interval: o.interval,
		Timeout: o.timeout, Processes: o.processes, PIDs: o.pids,
		Selector: capture.Selector{Names: o.match, Labels: o.labels, MaxSeries: o.maxSeries}}
	if o.quick {
		cfg.Windows, cfg.Window, cfg.Interval = 3, 10*time.Second, time.Second
	}
	cfg.Progress = captureProgress(progress, isTerminal(progress))
	cfg.Redact = redact.New().String // credential-like labels and URL passwords never reach capture.json
	return cfg
}

// captureProgress draws a live bar on a terminal (redrawn every tick) and
// prints a plain line per completed window otherwise.
func captureProgress(w io.Writer, tty bool) func(capture.Progress) {
	return func(p capture.Progress) {
		if !tty {
			if p.WindowDone() {
				fmt.Fprintf(w, "capture: window %d/%d done\n", p.Window, p.Windows)
			}
			return
		}
		const width = 30
		n := width * p.Tick / max(p.Ticks, 1)
		fmt.Fprintf(w, "\rcapture [%s%s] window %d/%d, scrape %d/%d", strings.Repeat("#", n), strings.Repeat(".", width-n),
			min(p.Window+1, p.Windows), p.Windows, p.Tick, p.Ticks)
		if p.Tick == p.Ticks {
			fmt.Fprintln(w)
		}
	}
}

func runCapture(cmd *cobra.Command, o captureOptions) error {
	cfg := o.config(cmd.ErrOrStderr())
	if o.maxSeries < 1 {
		return usageErrorf("capture: --max-series %d: want at least 1", o.maxSeries)
	}
	f := cmd.Flags()
	switch {
	case f.Changed("windows") && o.windows < 1:
		return usageErrorf("capture: --windows %d: want at least 1", o.windows)
	case f.Changed("window") && o.window <= 0:
		return usageErrorf("capture: --window %v: want a positive duration", o.window)
	case o.timeout < 0 || o.interval < 0:
		return usageErrorf("capture: --timeout %v, --interval %v: want positive durations (or leave them out)", o.timeout, o.interval)
	case len(o.queries) > 0 && o.prom == "":
		return usageErrorf("capture: --query needs --prometheus URL (a scrape of --target reads every series; --match selects among them)")
	}
	if err := cfg.Validate(); err != nil {
		return usageErrorf("capture: %v", err)
	}
	out, err := o.out.path()
	if err != nil {
		return err
	}
	if err := makeDir(out); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "capture: %d windows of %v from %d target(s)\n", cfg.Windows, cfg.Window, len(cfg.Targets)+len(cfg.Queries))
	c, runErr := capture.Run(cmd.Context(), cfg)
	if qe := (*capture.QueryError)(nil); errors.As(runErr, &qe) {
		return usageErrorf("capture: %v; fix the --query", qe)
	}
	if c == nil {
		return withCode(ExitError, runErr)
	}
	if err := writeCapture(out, c); err != nil {
		return withCode(ExitError, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s: %d series, %d windows\n",
		filepath.Join(out, capture.JSONFile), filepath.Join(out, capture.MarkdownFile), len(c.Metrics), len(c.Windows))
	var le *capture.LimitError
	if errors.As(runErr, &le) && o.prom != "" {
		return usageErrorf("capture: every query was over a bound (%v); an answer is read to %d bytes and %d series: narrow the --query",
			le, capture.DefaultMaxScrapeBytes, capture.MaxAnswerSeries)
	}
	if errors.As(runErr, &le) { // every answer was over a documented bound: not an exporter to capture
		return usageErrorf("capture: every scrape was over a bound (%v); a scrape reads at most %d bytes, %d-byte lines and %d samples: point --target at a narrower exporter",
			le, capture.DefaultMaxScrapeBytes, capture.DefaultMaxLineBytes, capture.DefaultMaxSamples)
	}
	if errors.Is(runErr, capture.ErrAllFailed) {
		return withCode(ExitError, fmt.Errorf("capture: %w; first error: %s", runErr, firstScrapeError(c)))
	}
	return withCode(ExitError, runErr)
}

func writeCapture(dir string, c *capture.Capture) error {
	js, err := capture.EncodeJSON(c)
	if err != nil {
		return err
	}
	var md bytes.Buffer
	if err := capture.WriteMarkdown(&md, c); err != nil {
		return err
	}
	if err := record.WriteFileAtomic(filepath.Join(dir, capture.JSONFile), js); err != nil {
		return err
	}
	return record.WriteFileAtomic(filepath.Join(dir, capture.MarkdownFile), md.Bytes())
}

func firstScrapeError(c *capture.Capture) string {
	for _, t := range c.Targets {
		if len(t.Errors) > 0 {
			return t.Errors[0]
		}
	}
	return "none recorded"
}
