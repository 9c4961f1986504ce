package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sagebench/sagebench/internal/calibrate"
)

// calibrateGradeOptions are `sagebench calibrate grade`'s flags.
type calibrateGradeOptions struct {
	tool      string
	truthPath string
	format    string
}

const calibrateGradeLong = `Grade a load tool's export against the conformance server's truth log.

OUTPUT is the tool's native export (the file, or the directory it wrote):
  sagebench       a run directory (requests.jsonl, run.json)
  aiperf          the artifact directory (profile_export.jsonl, profile_export_aiperf.json)
  guidellm        benchmarks.json
  inference-perf  the report directory (per_request_lifecycle_metrics.json, summary_lifecycle_metrics.json)
  genai-bench     the experiment directory (the scenario's *_concurrency_*.json or *_rate_*.json)

Per metric (TTFT, ITL, E2E in ms; output tokens): the tool's own median,
the median of its per-request values (they must agree within 0.1 — the
proof the export was read right), the true value from --truth, and the
per-request error (measured − true: median, p99, max); then requests the
server answered against those the export holds (lost, double-counted).

Exit codes: 0 graded, 1 error, 2 usage (unknown tool, unreadable file),
4 inconclusive (the tool's own TTFT median could not be reproduced).`

func newCalibrateGradeCmd() *cobra.Command {
	o := &calibrateGradeOptions{}
	cmd := &cobra.Command{
		Use:     "grade --tool NAME --truth truth.jsonl OUTPUT",
		Short:   "Grade a load tool's export against the conformance server's truth log",
		Long:    calibrateGradeLong,
		Example: "  sagebench calibrate grade --tool aiperf --truth truth.jsonl artifacts/my-run",
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	f := cmd.Flags()
	f.StringVar(&o.tool, "tool", "", "the export's tool: "+strings.Join(calibrate.Tools(), ", "))
	f.StringVar(&o.truthPath, "truth", "", "the conformance server's truth log (sagebench calibrate serve --log)")
	f.StringVar(&o.format, "format", "text", "output: text or json")
	return cmd
}

func (o *calibrateGradeOptions) run(cmd *cobra.Command, output string) error {
	if o.format != "text" && o.format != "json" {
		return usageErrorf("--format %q: choose text or json", o.format)
	}
	if o.truthPath == "" {
		return usageErrorf("--truth: required (the log of sagebench calibrate serve --log)")
	}
	truth, err := readTruthFile(o.truthPath)
	if err != nil {
		return usageErrorf("--truth %s: %v", o.truthPath, err)
	}
	e, err := calibrate.ReadExport(o.tool, output)
	if err != nil {
		var unk *calibrate.UnknownToolError
		if errors.As(err, &unk) {
			return usageErrorf("--tool: %v", err)
		}
		return usageErrorf("%v", err)
	}
	g := calibrate.GradeExport(e, truth)
	if o.format == "json" {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(g); err != nil {
			return err
		}
	} else {
		printGrade(cmd.OutOrStdout(), g)
	}
	for _, m := range g.Metrics { // TTFT is the proof; other rows show their own verdict
		if m.Metric == calibrate.TTFT.String() && m.OwnKnown && !m.Reproduced {
			return withCode(ExitInconclusive, fmt.Errorf("%s: the tool's own %s median %.3f is not reproduced (%.3f) from its per-request values", g.Tool, m.Metric, m.Own, m.Median))
		}
	}
	return nil
}

func readTruthFile(path string) ([]calibrate.Truth, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return calibrate.ReadTruth(f)
}

func printGrade(w io.Writer, g calibrate.Grade) {
	fmt.Fprintf(w, "%s against the truth log: %d answered by the server; %d ok and %d failed in the export; %d lost, %d double-counted\n",
		g.Tool, g.TruthRequests, g.Reported, g.Failed, g.Lost, g.Extra)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tn\town median\tmedian\treproduced\ttrue median\terror\tp99\ttrue p99\terror\t")
	for _, m := range g.Metrics {
		own, rep := "—", "—"
		if m.OwnKnown {
			own, rep = fmt.Sprintf("%.3f", m.Own), yesNo(m.Reproduced)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.3f\t%s\t%.3f\t%+.3f\t%.3f\t%.3f\t%+.3f\t\n", m.Metric, m.N, own, m.Median, rep, m.True, m.ErrMedian, m.P99, m.TrueP99, m.ErrP99)
	}
	tw.Flush()
	fmt.Fprintf(w, "server lateness (its first-token write − due): median %.3f ms, p99 %.3f ms\n", g.ServerLateTTF.Median, g.ServerLateTTF.P99)
	if g.Lag != "" {
		fmt.Fprintf(w, "the tool's own lag figure: %s\n", g.Lag)
	}
	for _, n := range g.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}
