package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/report"
)

// reportOptions are the flags of `sagebench report`.
type reportOptions struct {
	out    outputFlag
	format string
	title  string
}

func newReportCmd() *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report RUN_DIR|RESULTS_DIR... [-o report.html]",
		Short: "Render runs as one self-contained HTML page that leads with each Q's answer, or as SVG/PDF/PNG figure files",
		Long: `Report reads run.json, requests.jsonl, metrics.jsonl and a drill's events.jsonl
and windows.jsonl of each run directory (a results root is searched for
them) and writes one page. Runs of one Q at one scale form a section,
drawn side by side (one column of panels per run, shared axes); other Qs
or scales get sections of their own under a banner. Each section opens
with the answer sentence, the validity banner, the Q's answer figure and
the tables behind it; then TTFT, inter-token and end-to-end latency
CDFs, a CDF per tenant, priority or type, throughput and latency over
time with phases and drill events; then, across configurations with two
or more repetitions, mean ± CI and Mann-Whitney p; scraped metrics and
raw keys last, folded away. The page has every figure inline (SVG), no
script, and loads nothing from the network. Invalid or incomplete runs
are drawn under a red banner with their reasons, never refused.

--format svg, pdf or png writes each figure as a file into the -o
directory instead. The output's directory is created.`,
		Example: `  sagebench report results/q2/* -o r.html
  sagebench report results --output-dir reports/ -o reports/all.html
  sagebench report results/q4/run-a results/q4/run-b --format svg -o figures/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, o, args)
		},
	}
	f := cmd.Flags()
	o.out.bind(f, "report.html", "output file (html) or directory (svg, pdf, png: default figures)")
	f.StringVar(&o.format, "format", "html", "html, svg, pdf or png")
	f.StringVar(&o.title, "title", "", "page title (default from the runs)")
	return cmd
}

func runReport(cmd *cobra.Command, o reportOptions, dirs []string) error {
	if o.format != "html" && !slices.Contains(report.Formats, o.format) {
		return usageErrorf("report: --format %q: want html, svg, pdf or png", o.format)
	}
	if o.format != "html" {
		o.out.def = "figures"
	}
	out, err := o.out.path()
	if err != nil {
		return err
	}
	rep, err := report.Build(report.Config{Dirs: dirs, Title: o.title})
	if err != nil {
		return usageErrorf("report: %v", err)
	}
	for _, d := range rep.Skipped {
		fmt.Fprintf(cmd.ErrOrStderr(), "sagebench: report: %s holds the aggregate of repetitions, not a run: left out\n", d)
	}
	if o.format != "html" {
		return reportFigures(cmd, rep, out, o.format)
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		out = filepath.Join(out, "report.html")
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		return withCode(ExitError, err)
	}
	if err := makeParent(out); err != nil {
		return err
	}
	if err := record.WriteFileAtomic(out, buf.Bytes()); err != nil {
		return withCode(ExitError, err)
	}
	invalid := 0
	for _, r := range rep.Runs {
		if !r.Valid() {
			invalid++
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d runs (%d invalid) in %d sections, %d figures, %d bytes\n",
		out, len(rep.Runs), invalid, len(rep.Sections), len(rep.AllFigures()), buf.Len())
	return nil
}

func reportFigures(cmd *cobra.Command, rep *report.Report, dir, format string) error {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return usageErrorf("report: -o %s is a file; --format %s writes one file per figure into a directory", dir, format)
	}
	if err := makeDir(dir); err != nil {
		return err
	}
	paths, err := rep.WriteFigures(dir, format)
	if err != nil {
		return withCode(ExitError, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %d figures into %s\n", len(paths), filepath.Clean(dir))
	return nil
}
