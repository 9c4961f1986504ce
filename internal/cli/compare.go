package cli

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/stats"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// compareOptions are the flags of `sagebench compare`.
type compareOptions struct {
	stats  stats.Options
	format string
}

func newCompareCmd() *cobra.Command {
	var o compareOptions
	cmd := &cobra.Command{
		Use:   "compare [flags] INPUT...",
		Short: "Compare benchmark results like benchstat: medians, CIs, Mann-Whitney p, deltas, geomean",
		Long: `Compare reads Go benchmark text (go test -bench output, bench.txt), sagebench
run directories, unified_results.jsonl or pytest-benchmark JSON (*.json; one
sample per round when the run saved stats.data), and prints per benchmark and
unit the median with a distribution-free confidence interval, the Mann-Whitney
U p-value against the first column and the delta of the medians ("~" when not
significant at --alpha), plus a geomean row. The numbers equal benchstat's on
the same input. One input alone is summarised on its own, as benchstat does.

With --col KEY (e.g. --col format, --col /format, --col note) the columns are the
values of KEY instead of the inputs, so one input can compare configurations;
--table and --row choose the tables and rows the same way (benchstat's
-table, -row). Flags may be written with one dash, as benchstat users type
them (-col note, -alpha 0.01).

Unreadable lines are reported with file and line; any of them makes the exit
code 2 even though the table is printed.`,
		// Flags are parsed in RunE so that benchstat's single-dash spelling
		// (-col) is not read as the shorthands -c -o -l.
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if err := fs.Parse(compareDashes(args, fs)); err != nil {
				return usageErrorf("%v", err)
			}
			if help, _ := fs.GetBool("help"); help {
				return cmd.Help()
			}
			if fs.NArg() == 0 {
				return usageErrorf("compare needs at least one input (BASE [CURRENT...])")
			}
			return runCompare(cmd.OutOrStdout(), cmd.ErrOrStderr(), o, fs.Args())
		},
	}
	f := cmd.Flags()
	f.Float64Var(&o.stats.Alpha, "alpha", 0.05, "significance level of the Mann-Whitney U test")
	f.Float64Var(&o.stats.Confidence, "confidence", 0.95, "confidence level of the median intervals")
	f.StringVar(&o.stats.Col, "col", "", "compare the values of this key as columns (default: the inputs)")
	f.StringVar(&o.stats.Row, "row", "", "benchproc projection for rows (default .fullname)")
	f.StringVar(&o.stats.Table, "table", "", "benchproc projection for tables (default .config)")
	f.StringVar(&o.stats.Ignore, "ignore", "", "keys whose variation is ignored (e.g. cpu)")
	f.StringVar(&o.stats.Filter, "filter", "", "benchproc filter query (default *)")
	f.StringVar(&o.format, "format", "text", "output format: "+strings.Join(stats.Formats, "|"))
	return cmd
}

// compareDashes rewrites -name and -name=value, for each long flag name
// of fs, into --name, as benchstat's flag package reads them. Everything
// after "--" is left alone.
func compareDashes(args []string, fs *pflag.FlagSet) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if fs.Lookup(name) != nil && len(name) > 1 {
				a = "-" + a
			}
		}
		out = append(out, a)
	}
	return out
}

func runCompare(stdout, stderr io.Writer, o compareOptions, args []string) error {
	if !compareFormatIn(o.format, stats.Formats) {
		return usageErrorf("--format %q: want one of %s", o.format, strings.Join(stats.Formats, ", "))
	}
	if err := o.stats.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	sets, err := compareReadInputs(args)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if err := compareOneQ(sets); err != nil {
		return usageErrorf("%v", err)
	}
	sets, left := compareValidOnly(sets)
	for _, n := range left {
		fmt.Fprintf(stderr, "sagebench: compare: %s\n", n)
	}
	for _, s := range sets {
		if len(s.Results) == 0 {
			compareReportProblems(stderr, sets)
			return usageErrorf("%s holds no benchmark results (empty, unreadable or wrong kind of file)", s.Source)
		}
	}
	if err := benchset.CheckWorkloads(sets...); err != nil {
		return usageErrorf("%v", err)
	}
	results, units := benchset.Combine(sets...)
	col := o.stats.Col
	o.stats.Col = compareResolveKey(o.stats.Col, sets)
	rep, err := stats.Compare(results, units, o.stats)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if o.stats.Col != "" && !compareHasColumns(rep) {
		// The key is absent (or single-valued): every input would be
		// pooled into one column and compared with nothing.
		return usageErrorf("--col %q gives one column (the key matches nothing or has one value): nothing to compare", col)
	}
	if err := rep.Write(stdout, o.format); err != nil {
		return withCode(ExitError, err)
	}
	if o.format == "text" || o.format == "markdown" {
		writeWithinFloor(stdout, rep, sets)
	}
	if n := compareReportProblems(stderr, sets); n > 0 {
		return withCode(ExitUsage, fmt.Errorf("%d unreadable input lines or entries (listed above); the comparison leaves them out", n))
	}
	return nil
}

// compareHasColumns reports whether any table of rep has two columns.
func compareHasColumns(rep *stats.Report) bool {
	for _, t := range rep.Tables {
		if len(t.Columns) > 1 {
			return true
		}
	}
	return false
}

func compareFormatIn(f string, formats []string) bool {
	for _, x := range formats {
		if f == x {
			return true
		}
	}
	return false
}

// compareReadInputs reads each path into a Set labelled by its path; a repeated
// path gets a #N suffix so that its results stay in their own column.
func compareReadInputs(paths []string) ([]*benchset.Set, error) {
	seen := map[string]int{}
	var sets []*benchset.Set
	for _, p := range paths {
		label := p
		if n := seen[p]; n > 0 {
			label = fmt.Sprintf("%s#%d", p, n)
		}
		seen[p]++
		s, err := benchset.Read(p, label)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	return sets, nil
}

// compareReportProblems prints every input problem and returns how many there were.
func compareReportProblems(w io.Writer, sets []*benchset.Set) int {
	n := 0
	for _, s := range sets {
		for _, p := range s.Problems {
			fmt.Fprintf(w, "sagebench: %s\n", p)
			n++
		}
	}
	return n
}

// compareResolveKey turns a bare KEY into the benchproc projection it means: a
// file configuration key if any result has it, else the sub-benchmark
// name key /KEY.
func compareResolveKey(key string, sets []*benchset.Set) string {
	if key == "" || strings.ContainsAny(key[:1], "./") || strings.ContainsAny(key, ",@()") {
		return key
	}
	for _, s := range sets {
		for _, r := range s.Results {
			if _, ok := r.ConfigIndex(key); ok {
				return key
			}
		}
	}
	return "/" + key
}

// compareQ is the Q a run name starts with ("Q2" of
// "Q2ControlMix/backend=sage"), "" for a name that names none.
var compareQ = regexp.MustCompile(`^Q[0-9]+`)

// compareOneQ refuses inputs whose runs answer different Qs: a Q1 run
// compared with a Q2 run says nothing.
func compareOneQ(sets []*benchset.Set) error {
	first, where := "", ""
	for _, s := range sets {
		for _, r := range s.Runs {
			q := compareQ.FindString(r.Name)
			switch {
			case q == "":
			case first == "":
				first, where = q, r.Dir
			case q != first:
				return fmt.Errorf("the inputs hold runs of different workloads: %s (%s) and %s (%s); compare runs of one Q", first, where, q, r.Dir)
			}
		}
	}
	return nil
}

// compareValidOnly leaves the invalid or incomplete runs of a run tree
// out, as gate does, and says which: their results are no evidence. A
// set whose runs are all valid, or that holds no run directories, is
// kept as read.
func compareValidOnly(sets []*benchset.Set) ([]*benchset.Set, []string) {
	var out []*benchset.Set
	var notes []string
	for _, s := range sets {
		if fi, err := os.Stat(s.Source); err != nil || !fi.IsDir() || !compareHasInvalid(s) {
			out = append(out, s)
			continue
		}
		var kept []*benchset.Set
		for _, r := range s.Runs {
			if !r.Valid || !r.Complete || len(r.Reasons) > 0 {
				notes = append(notes, fmt.Sprintf("run %s (%s) left out: invalid or incomplete (%s)", r.ID, r.Dir, strings.Join(r.Reasons, "; ")))
				continue
			}
			rs, err := benchset.ReadRunDir(r.Dir, s.Label)
			if err != nil {
				notes = append(notes, fmt.Sprintf("run %s (%s) left out: %v", r.ID, r.Dir, err))
				continue
			}
			kept = append(kept, rs)
		}
		if len(kept) == 0 {
			// Nothing valid: keep an empty set so that the input is reported
			// as holding no results.
			kept = []*benchset.Set{{Source: s.Source, Label: s.Label, Problems: s.Problems}}
		} else {
			kept[0].Problems = append(kept[0].Problems, s.Problems...)
		}
		out = append(out, kept...)
	}
	return out, notes
}

// compareHasInvalid reports whether s read a run directory that is
// invalid or incomplete.
func compareHasInvalid(s *benchset.Set) bool {
	for _, r := range s.Runs {
		if !r.Valid || !r.Complete || len(r.Reasons) > 0 {
			return true
		}
	}
	return false
}
