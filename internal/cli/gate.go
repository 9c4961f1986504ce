package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/gate"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/spf13/cobra"
)

// gateOptions are the flags of `sagebench gate`.
type gateOptions struct {
	policyFile string
	alpha      float64
	threshold  float64
	expect     []string
	format     string
	report     string
}

var gateFormats = []string{"text", "markdown", "json"}

func newGateCmd() *cobra.Command {
	var o gateOptions
	cmd := &cobra.Command{
		Use:   "gate [flags] [BASE] CURRENT",
		Short: "Fail-closed regression verdict: pass (0), regression (3), inconclusive (4)",
		Long: `Gate compares BASE (the stored baseline) with CURRENT and decides from evidence
only. It passes only when every rule that applies could be checked and none
failed. Inputs are Go benchmark text, run directories, unified_results.jsonl or
pytest-benchmark JSON (*.json).

  input       BASE or CURRENT missing or empty, unreadable lines, invalid or
              incomplete runs                                  -> inconclusive
  coverage    a benchmark (or --expect symbol) missing on either side -> inconclusive
  samples     too few samples for Mann-Whitney to reach --alpha -> inconclusive
  direction   a significant change in a unit of unknown direction -> inconclusive
  geomean     significant geomean regression beyond --threshold -> regression
  limit-*     per-benchmark absolute limits on mean / p99 (policy) -> regression
  trend-*     mean +10 % / p99 +15 % against BASE (floors per unit) -> regression

With CURRENT alone (no baseline yet, e.g. a repository's first change) only the
absolute rules judge it: limits and expected benchmarks; the trend rule is
skipped with a NOTE line (policy trend.missing_baseline: skip|fail). A BASE
that is given but missing keeps the geomean rule fail-closed (inconclusive).
A rule that evaluated nothing prints NOTE ... not evaluated, never PASS.
Findings from an invalid or incomplete run are inconclusive, never a regression.

Exit codes: 0 pass, 3 regression, 4 inconclusive, 2 usage error, 1 tool error.
The policy (--policy FILE, YAML, strict) defaults to alpha 0.01 and a +5 %
geomean time threshold; --alpha and --threshold override it.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 || len(args) > 2 {
				return usageErrorf("gate takes [BASE] CURRENT (got %d inputs): the stored baseline and the new results, or the new results alone to check absolute limits", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := o.policy(cmd)
			if err != nil {
				return err
			}
			if len(args) == 1 {
				if len(p.Limits) == 0 && len(p.Expect) == 0 {
					return usageErrorf("gate with CURRENT alone judges only limits and expected benchmarks: set limits: in --policy or pass --expect, or give BASE too")
				}
				return runGate(cmd.OutOrStdout(), p, o, "", args[0])
			}
			return runGate(cmd.OutOrStdout(), p, o, args[0], args[1])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.policyFile, "policy", "", "gate policy YAML (strict; defaults to the built-in contract)")
	f.Float64Var(&o.alpha, "alpha", 0.01, "significance level (overrides the policy)")
	f.Float64Var(&o.threshold, "threshold", 5, "geomean regression threshold in percent (overrides the policy)")
	f.StringArrayVar(&o.expect, "expect", nil, "benchmark that must be present on both sides: a function (BenchmarkEncode), a full name with or without -N, or a prefix ending in / (repeatable)")
	f.StringVar(&o.format, "format", "text", "output format: "+strings.Join(gateFormats, "|"))
	f.StringVar(&o.report, "report", "", "also write a Markdown report to this file")
	return cmd
}

// policy loads the policy file and applies the flags set explicitly.
func (o gateOptions) policy(cmd *cobra.Command) (gate.Policy, error) {
	p := gate.Default()
	if o.policyFile != "" {
		if err := readConfig(cmd.Context(), o.policyFile, func() error {
			lp, err := gate.LoadPolicy(o.policyFile)
			if err != nil {
				return usageErrorf("%v", err)
			}
			p = lp
			return nil
		}); err != nil {
			return gate.Policy{}, err // p may still be written by the abandoned read
		}
	}
	if cmd.Flags().Changed("alpha") {
		p.Alpha = o.alpha
	}
	if cmd.Flags().Changed("threshold") {
		p.Geomean.ThresholdPct = o.threshold
	}
	p.Expect = append(p.Expect, o.expect...)
	if err := p.Validate(); err != nil {
		return p, usageErrorf("%v", err)
	}
	if !compareFormatIn(o.format, gateFormats) {
		return p, usageErrorf("--format %q: want one of %s", o.format, strings.Join(gateFormats, ", "))
	}
	return p, nil
}

// runGate gates curPath against basePath, or curPath alone when
// basePath is "".
func runGate(stdout io.Writer, p gate.Policy, o gateOptions, basePath, curPath string) error {
	if bi, err := os.Stat(basePath); err == nil {
		if ci, err := os.Stat(curPath); err == nil && os.SameFile(bi, ci) {
			return usageErrorf("BASE and CURRENT are the same file (%s): pass the stored baseline and the new results", curPath)
		}
	}
	out, baseErr, curErr, err := gateEvaluate(p, basePath, curPath)
	for _, e := range []error{baseErr, curErr} {
		if benchset.IsTooLarge(e) { // a documented bound, not missing evidence: say so and stop
			return usageErrorf("%v", e)
		}
	}
	if err != nil {
		return withCode(ExitError, err)
	}
	for _, e := range []error{baseErr, curErr} {
		if e != nil {
			out.Findings = append([]gate.Finding{{Verdict: gate.Inconclusive, Rule: "input", Subject: "read", Detail: e.Error()}}, out.Findings...)
			out.Verdict = max(out.Verdict, gate.Inconclusive)
		}
	}
	if err := gateWriteOutcome(stdout, out, o.format); err != nil {
		return withCode(ExitError, err)
	}
	if o.report != "" {
		var buf bytes.Buffer
		if basePath == "" {
			basePath = "(none: absolute rules only)"
		}
		fmt.Fprintf(&buf, "# sagebench gate\n\nbase: `%s`  \ncurrent: `%s`  \nalpha: %v, geomean threshold: %+.2f%%\n\n", basePath, curPath, p.Alpha, p.Geomean.ThresholdPct)
		if err := out.WriteMarkdown(&buf); err != nil {
			return withCode(ExitError, err)
		}
		if err := makeParent(o.report); err != nil {
			return err
		}
		if err := record.WriteFileAtomic(o.report, buf.Bytes()); err != nil {
			return withCode(ExitError, err)
		}
	}
	return silentExit(gateExitCode(out.Verdict))
}

// gateEvaluate reads the sides and evaluates them; the read errors are
// evidence (an inconclusive finding), the last error is misuse.
func gateEvaluate(p gate.Policy, basePath, curPath string) (out *gate.Outcome, baseErr, curErr, err error) {
	cur, curErr := gateReadSide(curPath, "current")
	if basePath == "" {
		out, err = gate.EvaluateCurrent(cur, p)
		return out, nil, curErr, err
	}
	base, baseErr := gateReadSide(basePath, "base")
	out, err = gate.Evaluate(base, cur, p)
	return out, baseErr, curErr, err
}

// gateReadSide reads one side of the gate. A side that cannot be read is a nil
// set plus the reason: the gate turns it into an inconclusive verdict.
func gateReadSide(path, label string) (*benchset.Set, error) {
	s, err := benchset.Read(path, label)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	return s, nil
}

func gateWriteOutcome(w io.Writer, out *gate.Outcome, format string) error {
	switch format {
	case "markdown":
		return out.WriteMarkdown(w)
	case "json":
		return out.WriteJSON(w)
	}
	return out.WriteText(w)
}

func gateExitCode(v gate.Verdict) int {
	switch v {
	case gate.Pass:
		return ExitOK
	case gate.Regression:
		return ExitRegression
	}
	return ExitInconclusive
}
