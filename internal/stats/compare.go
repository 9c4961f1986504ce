package stats

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// Options configure a comparison. The zero value compares by input (.file)
// at benchstat's defaults.
type Options struct {
	Alpha      float64 // significance level; 0 means 0.05
	Confidence float64 // CI level; 0 means 0.95
	Table      string  // table projection (plus the unit); "" means .config
	Col        string  // column projection; "" means .file
	Row        string  // row projection; "" means .fullname
	Ignore     string  // keys whose variation is ignored
	Filter     string  // benchfilter query; "" means *
}

// Validate reports an option out of range.
func (o Options) Validate() error {
	if !(o.Alpha >= 0 && o.Alpha <= 1) { // also NaN
		return fmt.Errorf("alpha %v is outside [0, 1]", o.Alpha)
	}
	if !(o.Confidence >= 0 && o.Confidence <= 1) {
		return fmt.Errorf("confidence %v is outside [0, 1]", o.Confidence)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.Alpha == 0 {
		o.Alpha = benchmath.DefaultThresholds.CompareAlpha
	}
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.Table == "" {
		o.Table = ".config"
	}
	if o.Col == "" {
		o.Col = ".file"
	}
	if o.Row == "" {
		o.Row = ".fullname"
	}
	if o.Filter == "" {
		o.Filter = "*"
	}
	return o
}

// Report is a comparison: one Table per configuration and unit.
type Report struct {
	Alpha      float64  `json:"alpha"`
	Confidence float64  `json:"confidence"`
	Tables     []*Table `json:"tables"`
}

// Table compares the rows of one configuration and unit across columns.
// Column 0 is the base every other column is compared with.
type Table struct {
	Config     []KeyValue `json:"config,omitempty"`
	Unit       string     `json:"unit"`
	Assumption string     `json:"assumption"` // "median" or "exact"
	Better     int        `json:"better"`     // +1 higher is better, -1 lower, 0 unknown
	Columns    []string   `json:"columns"`
	Rows       []*Row     `json:"rows"`
	Geomean    []*Geomean `json:"geomean"` // one per column
}

// KeyValue is one configuration key of a table.
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Row is one benchmark; Cells has one entry per column, nil where the
// benchmark is absent from that column.
type Row struct {
	Name  string  `json:"name"`
	Cells []*Cell `json:"cells"`
}

// Cell is the sample of one benchmark in one column.
type Cell struct {
	Values     []float64 `json:"values"` // sorted
	Center     float64   `json:"center"` // median (or mode for exact units)
	Lo         float64   `json:"lo"`     // confidence interval bounds
	Hi         float64   `json:"hi"`
	Confidence float64   `json:"confidence"`
	// Against the base column; HasBase is false in column 0 and where the
	// base lacks this row.
	HasBase  bool     `json:"has_base"`
	P        float64  `json:"p"`
	N1       int      `json:"n1"`
	N2       int      `json:"n2"`
	Delta    string   `json:"delta"` // benchstat's text: "~", "+3.05%", "?"
	Ratio    float64  `json:"ratio"` // center / base center; 0 if undefined
	Warnings []string `json:"warnings,omitempty"`

	same       bool // equal to the base in an exact unit: no change
	sample     *benchmath.Sample
	summary    benchmath.Summary
	comparison benchmath.Comparison
}

// Significant reports whether the change against the base is significant.
// Equal values in an assume=exact unit are no change, whatever p
// benchmath gives them (it reports p=0 for any exact comparison).
func (c *Cell) Significant() bool { return c.HasBase && c.Delta != "~" && !c.same }

// CIPct is benchstat's "± x%" text for the confidence interval.
func (c *Cell) CIPct() string { return c.summary.PctRangeString() }

// PText is benchstat's "p=0.000 n=10" text.
func (c *Cell) PText() string { return c.comparison.String() }

// Geomean summarises one column of a table.
type Geomean struct {
	HasSummary bool     `json:"has_summary"`
	Summary    float64  `json:"summary"`
	HasRatio   bool     `json:"has_ratio"`
	Ratio      float64  `json:"ratio"` // geomean of center ratios to the base
	Warnings   []string `json:"warnings,omitempty"`
}

// DeltaPct renders the geomean ratio as benchstat does ("+1.23%").
func (g *Geomean) DeltaPct() string {
	if !g.HasRatio {
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", (g.Ratio-1)*100)
}

// ErrNoResults is returned when nothing is left to compare.
var ErrNoResults = errors.New("no benchmark results to compare")

// Compare builds the comparison of results (each carrying the column key,
// e.g. .file) with unit metadata units.
func Compare(results []*benchfmt.Result, units benchfmt.UnitMetadataMap, opts Options) (*Report, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	for _, r := range results {
		if err := b.add(r); err != nil {
			return nil, err
		}
	}
	if len(b.tables) == 0 {
		return nil, ErrNoResults
	}
	thr := &benchmath.Thresholds{CompareAlpha: opts.Alpha}
	rep := &Report{Alpha: opts.Alpha, Confidence: opts.Confidence}
	for _, k := range b.sortedTables() {
		rep.Tables = append(rep.Tables, b.table(k, units, thr, opts.Confidence))
	}
	return rep, nil
}

func errStrings(errs ...[]error) []string {
	var out []string
	for _, es := range errs {
		for _, e := range es {
			out = append(out, e.Error())
		}
	}
	return out
}

// MarshalJSON writes a cell with unbounded confidence limits (too few
// samples) as null, since JSON has no infinity.
func (c *Cell) MarshalJSON() ([]byte, error) {
	type plain Cell
	finite := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		*plain
		Lo *float64 `json:"lo"`
		Hi *float64 `json:"hi"`
	}{(*plain)(c), finite(c.Lo), finite(c.Hi)})
}
