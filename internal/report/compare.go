package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// confidence is the level of the comparison's intervals.
const confidence = 0.95

// maxCompareRows bounds the metrics compared.
const maxCompareRows = 40

// Comparison is the statistics across the configurations of a
// section's runs: runs of one configuration (ConfigKey) are its
// repetitions, estimated
// with aggregate.Runs (duplicates of a seed left out); a metric is
// compared only where at least two configurations have two measured
// repetitions (or, with one configuration, summarised where it has two).
type Comparison struct {
	Sides []Side
	Rows  []CompareRow
	// Diffs are the run_config keys that differ from the first
	// configuration, per other configuration.
	Diffs []string
	Note  string // what the table is, or why there is none
}

// Side is one configuration: its runs' labels and their aggregate
// (Agg.Duplicates: the runs left out as a repeated seed).
type Side struct {
	Label   string // "run1, run3"
	Backend string
	Agg     aggregate.Aggregate
}

// CompareRow is one metric across the configurations: the estimate's
// text per side and the Mann-Whitney p-value against the first side.
type CompareRow struct {
	Metric string
	Cells  []string
	P      []string
}

func compareRuns(runs []*Run, label func(int) string) *Comparison {
	var keys []string
	groups := map[string][]int{}
	for i, r := range runs {
		k := ConfigKey(r.Record.RunConfig)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	c := &Comparison{}
	for _, k := range keys {
		var recs []record.Run
		var names []string
		for _, i := range groups[k] {
			recs = append(recs, validRecord(runs[i]))
			names = append(names, label(i))
		}
		// the earlier run of a seed is the sample, the later the duplicate
		slices.SortStableFunc(recs, func(a, b record.Run) int { return a.StartedAt.Compare(b.StartedAt) })
		a := aggregate.Runs(recs, confidence)
		c.Sides = append(c.Sides, Side{Label: strings.Join(names, ", "), Backend: recs[0].Backend, Agg: a})
	}
	for _, k := range keys[1:] {
		first, other := runs[groups[keys[0]][0]], runs[groups[k][0]]
		if d := aggregate.ConfigDiff(first.Record.RunConfig, other.Record.RunConfig); len(d) > 0 {
			c.Diffs = append(c.Diffs, fmt.Sprintf("%s vs %s: %s", c.Sides[0].Label, label(groups[k][0]), strings.Join(d, "; ")))
		}
	}
	c.fill()
	return c
}

// validRecord is the run's record with its validity as the report sees
// it (a run with unreadable files is not valid).
func validRecord(r *Run) record.Run {
	rec := *r.Record
	rec.Valid = r.Valid()
	return rec
}

// fill compares every metric with enough repetitions.
func (c *Comparison) fill() {
	need := min(2, len(c.Sides))
	for _, e := range c.Sides[0].Agg.Metrics {
		row := CompareRow{Metric: e.Name}
		enough := 0
		for _, s := range c.Sides {
			est, ok := s.Agg.Metric(e.Name)
			row.Cells = append(row.Cells, estimateText(est, ok))
			if ok && est.N >= 2 {
				enough++
			}
			row.P = append(row.P, pText(c.Sides[0].Agg, s.Agg, e.Name))
		}
		if enough >= need && len(c.Rows) < maxCompareRows {
			c.Rows = append(c.Rows, row)
		}
	}
	invalid := 0
	for _, side := range c.Sides {
		invalid += side.Agg.Repetitions - side.Agg.Valid
	}
	defer func() {
		if invalid > 0 {
			c.Note += fmt.Sprintf(" %d invalid repetition(s) left out.", invalid)
		}
	}()
	switch {
	case len(c.Rows) == 0:
		c.Note = "No comparison statistics: no configuration here has two valid repetitions measuring a metric, and a difference between single runs is not evidence (run each configuration with --repeat 3 or more)."
	case len(c.Sides) == 1:
		c.Note = fmt.Sprintf("One configuration: each metric's mean with its %g %% Student t interval over the valid repetitions (n).", 100*confidence)
	default:
		c.Note = fmt.Sprintf("Mean with its %g %% Student t interval over each configuration's valid repetitions (n); p: Mann-Whitney U against the first configuration. Only metrics with two or more repetitions on at least two sides.", 100*confidence)
	}
}

// estimateText is an estimate for the table: mean ± CI (n).
func estimateText(e aggregate.Estimate, ok bool) string {
	if !ok {
		return "–"
	}
	if e.State != result.Measured {
		return result.Short(e.Metric())
	}
	return fmt.Sprintf("%s (n=%d)", result.Mean(e.Metric()), e.N)
}

func pText(a, b aggregate.Aggregate, name string) string {
	ea, oka := a.Metric(name)
	eb, okb := b.Metric(name)
	if !oka || !okb {
		return ""
	}
	if p, ok := aggregate.PValue(ea.Values, eb.Values); ok {
		return fmt.Sprintf("%.3f", p)
	}
	return ""
}

// ConfigKey identifies a configuration: a hash of the run_config
// without what does not change what a repetition measures — its seed
// (repetitions differ only there), output_dir, repeat, the Q's targets
// and the validity limits (both judge a run, neither changes a request).
func ConfigKey(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	for _, k := range []string{"seed", "output_dir", "repeat", "validity"} {
		delete(m, k)
	}
	for k, v := range m {
		if sec, ok := v.(map[string]any); ok && len(k) == 2 && k[0] == 'q' {
			delete(sec, "target")
		}
	}
	b, _ := json.Marshal(m) // map keys sorted: canonical
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
