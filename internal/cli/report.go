package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/report"
)

// reportOptions are the flags of `sagebench report`.
type reportOptions struct {
	out    string
	format string
	title  string
}

func newReportCmd() *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report RUN_DIR... [-o report.html]",
		Short: "Render run directories as one self-contained HTML page with figures, or as SVG/PNG figure files",
		Long: `Report reads run.json, requests.jsonl and metrics.jsonl of each run directory
and draws, per run, the end-to-end latency CDF per group (phase, tenant,
priority or type), throughput and errors over time, windowed p99 over time,
p99 per summary group and the target metrics recorded during the run; with
several runs, their CDFs overlaid, the throughput–p99 frontier and compare's
statistics. The page has every figure inline (SVG), no script, and loads
nothing from the network. Invalid or incomplete runs are drawn under a red
banner with their reasons, never refused.

--format svg or png writes each figure as a file into the -o directory instead.`,
		Example: `  sagebench report results/q2/* -o r.html
  sagebench report results/q4/run-a results/q4/run-b --format svg -o figures/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "out", "o", "", "output file (html; default report.html) or directory (svg, png; default figures)")
	f.StringVar(&o.format, "format", "html", "html, svg or png")
	f.StringVar(&o.title, "title", "", "page title (default from the runs)")
	return cmd
}

func runReport(cmd *cobra.Command, o reportOptions, dirs []string) error {
	if o.format != "html" && o.format != "svg" && o.format != "png" {
		return usageErrorf("report: --format %q: want html, svg or png", o.format)
	}
	rep, err := report.Build(report.Config{Dirs: dirs, Title: o.title})
	if err != nil {
		return usageErrorf("report: %v", err)
	}
	if o.format != "html" {
		return reportFigures(cmd, rep, o)
	}
	if o.out == "" {
		o.out = "report.html"
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		return withCode(ExitError, err)
	}
	if err := record.WriteFileAtomic(o.out, buf.Bytes()); err != nil {
		return withCode(ExitError, err)
	}
	invalid := 0
	for _, r := range rep.Runs {
		if !r.Valid() {
			invalid++
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d runs (%d invalid), %d figures, %d bytes\n",
		o.out, len(rep.Runs), invalid, len(rep.AllFigures()), buf.Len())
	return nil
}

func reportFigures(cmd *cobra.Command, rep *report.Report, o reportOptions) error {
	if o.out == "" {
		o.out = "figures"
	}
	if st, err := os.Stat(o.out); err == nil && !st.IsDir() {
		return usageErrorf("report: -o %s is a file; --format %s writes one file per figure into a directory", o.out, o.format)
	}
	paths, err := rep.WriteFigures(o.out, o.format)
	if err != nil {
		return withCode(ExitError, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %d figures into %s\n", len(paths), filepath.Clean(o.out))
	return nil
}
