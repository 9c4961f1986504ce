package leaderboard

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/result"
)

// Key groups repetitions of one configuration.
type Key struct {
	Workload    string `json:"workload"`
	Backend     string `json:"backend"`
	Nodes       int    `json:"nodes"`
	Parallelism int    `json:"parallelism"`
	ConfigHash  string `json:"config_hash"`
	Config      string `json:"config,omitempty"` // metadata.config: one configuration of a run
}

// Metric is a leaderboard column of the unified schema.
type Metric struct {
	Def result.Def
	Of  func(Row) *float64
}

// Name is the column's name.
func (m Metric) Name() string { return m.Def.Name }

// Metrics are the leaderboard's columns of the unified schema, in order.
var Metrics = []Metric{
	{result.Def{Name: "throughput", Unit: result.ReqPerS, Direction: result.Higher}, func(r Row) *float64 { return r.Throughput }},
	{result.Def{Name: "latency_p50", Unit: result.Ms, Direction: result.Lower}, func(r Row) *float64 { return r.LatencyP50 }},
	{result.Def{Name: "latency_p95", Unit: result.Ms, Direction: result.Lower}, func(r Row) *float64 { return r.LatencyP95 }},
	{result.Def{Name: "latency_p99", Unit: result.Ms, Direction: result.Lower}, func(r Row) *float64 { return r.LatencyP99 }},
	{result.Def{Name: "success_rate", Unit: result.Fraction, Direction: result.Higher}, func(r Row) *float64 { return r.SuccessRate }},
}

// Entry is one configuration on the leaderboard: its metrics over its
// repetitions (aggregate.Of, as `sagebench run --repeat` computes them)
// and its Q's primary metric.
type Entry struct {
	Key
	// Name is the Q's name (ControlMix); Label names the configuration
	// for a reader: the Q, its scale and the run_config keys that differ
	// between the entries of that Q.
	Name    string                        `json:"name,omitempty"`
	Label   string                        `json:"label"`
	Scale   string                        `json:"scale,omitempty"`
	Reps    int                           `json:"repetitions"`
	Seeds   []int64                       `json:"seeds"`
	RunIDs  []string                      `json:"run_ids"`
	Primary *aggregate.Estimate           `json:"primary,omitempty"`
	Values  map[string]aggregate.Estimate `json:"metrics"`
	// Duplicates are runs of the entry with a seed an earlier run of it
	// had: the same sample again, left out of the estimates.
	Duplicates []string `json:"duplicates,omitempty"`
}

// Comparison is one backend against another on the same workload
// (workload_hash), nodes and seeds: the difference of the means and the
// Welch t-test p-value.
type Comparison struct {
	Workload     string        `json:"workload"`
	WorkloadHash string        `json:"workload_hash"`
	Nodes        int           `json:"nodes"`
	Config       string        `json:"config,omitempty"`
	Base         string        `json:"base"`
	Other        string        `json:"other"`
	Seeds        []int64       `json:"seeds"`
	Metrics      []MetricDelta `json:"metrics"`
}

// MetricDelta compares one metric of two backends.
type MetricDelta struct {
	Metric      string  `json:"metric"`
	Unit        string  `json:"unit"`
	Base        float64 `json:"base_mean"`
	Other       float64 `json:"other_mean"`
	DeltaPct    float64 `json:"delta_pct"`
	P           float64 `json:"p"`
	N           [2]int  `json:"n"`
	Significant bool    `json:"significant"`
	Better      string  `json:"better,omitempty"` // the backend that wins, when significant
}

// Board is the whole leaderboard.
type Board struct {
	Entries     []Entry      `json:"entries"`
	Invalid     []Row        `json:"invalid"`
	Comparisons []Comparison `json:"comparisons"`
	// Refused are comparisons not made: runs of one Q, nodes and
	// configuration on two backends that ran different workloads.
	Refused    []string `json:"refused,omitempty"`
	Duplicates int      `json:"duplicates"`
	Aggregates int      `json:"aggregate_rows_skipped"`
	Problems   []string `json:"problems,omitempty"`
	Confidence float64  `json:"confidence"`
	Alpha      float64  `json:"alpha"`
}

// Options set the statistics; zero values mean 0.95 and 0.05.
type Options struct {
	Confidence float64
	Alpha      float64
}

// Validate applies defaults and checks ranges.
func (o *Options) Validate() error {
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if !(o.Confidence > 0 && o.Confidence < 1) || !(o.Alpha > 0 && o.Alpha < 1) {
		return fmt.Errorf("confidence %v and alpha %v: want both in (0, 1)", o.Confidence, o.Alpha)
	}
	return nil
}

// Build ranks the collection: valid runs grouped and summarised, invalid
// runs listed apart.
func Build(c *Collection, o Options) (*Board, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	b := &Board{Duplicates: c.Duplicates, Aggregates: c.Aggregates, Problems: c.Problems, Confidence: o.Confidence, Alpha: o.Alpha}
	groups := map[Key][]Row{}
	for _, r := range c.Rows {
		if !r.Valid {
			b.Invalid = append(b.Invalid, r)
			continue
		}
		k := Key{r.Workload, r.Backend, r.Nodes, r.Parallelism, r.ConfigHash, r.Config}
		groups[k] = append(groups[k], r)
	}
	configs := map[string]json.RawMessage{}
	read := runConfigs{}
	for k, rows := range groups {
		e := entryOf(k, rows, o.Confidence)
		if raw, err := read.of(rows[0]); err == nil {
			configs[e.RunIDs[0]] = raw
		}
		b.Entries = append(b.Entries, e)
	}
	sort.Slice(b.Entries, func(i, j int) bool { return lessEntry(b.Entries[i], b.Entries[j]) })
	setLabels(b.Entries, configs)
	sort.Slice(b.Invalid, func(i, j int) bool { return b.Invalid[i].RunID < b.Invalid[j].RunID })
	b.Comparisons, b.Refused = compareBackends(c.Rows, o.Alpha, read)
	return b, nil
}

// lessEntry orders by workload, then shape, then higher throughput first.
func lessEntry(a, b Entry) bool {
	if a.Workload != b.Workload {
		return a.Workload < b.Workload
	}
	if a.Nodes != b.Nodes || a.Parallelism != b.Parallelism {
		return a.Nodes < b.Nodes || (a.Nodes == b.Nodes && a.Parallelism < b.Parallelism)
	}
	if a.Config != b.Config {
		return a.Config < b.Config
	}
	if ta, tb := mean(a.Values["throughput"]), mean(b.Values["throughput"]); ta != tb {
		return ta > tb
	}
	return a.Backend+a.ConfigHash < b.Backend+b.ConfigHash
}

func mean(e aggregate.Estimate) float64 {
	if e.Mean == nil {
		return -1
	}
	return *e.Mean
}

// entryOf estimates every metric of rows, leaving out a run that repeats
// an earlier run's seed: the later run (by its timestamp, then run id) is
// the duplicate.
func entryOf(k Key, rows []Row, conf float64) Entry {
	sort.SliceStable(rows, func(i, j int) bool { return earlier(rows[i], rows[j]) })
	e := Entry{Key: k, Values: map[string]aggregate.Estimate{}}
	if len(rows) > 0 {
		e.Name, _ = rows[0].Metadata["name"].(string)
	}
	kept, dups := aggregate.DistinctSeeds(rows, func(r Row) (int64, string) { return r.Seed, r.RunID })
	e.Duplicates = dups
	for _, r := range kept {
		e.RunIDs, e.Seeds = append(e.RunIDs, r.RunID), append(e.Seeds, r.Seed)
	}
	sort.Slice(e.Seeds, func(i, j int) bool { return e.Seeds[i] < e.Seeds[j] })
	e.Reps = len(kept)
	for _, m := range Metrics {
		e.Values[m.Name()] = aggregate.Of(columnSamples(kept, m), conf)
	}
	if p := primarySamples(kept); p != nil {
		est := aggregate.Of(p, conf)
		e.Primary = &est
	}
	return e
}

// columnSamples are rows' values of a unified column: a null one is not
// measurable.
func columnSamples(rows []Row, m Metric) []aggregate.Sample {
	out := make([]aggregate.Sample, len(rows))
	for i, r := range rows {
		s := aggregate.Sample{Valid: r.Valid, Metric: m.Def.NotMeasurable("null in the unified row")}
		if v := m.Of(r); v != nil {
			s.Metric = m.Def.Measure(*v, 1, "")
		}
		out[i] = s
	}
	return out
}

// primarySamples are rows' primary metrics (nil when no row has one).
func primarySamples(rows []Row) []aggregate.Sample {
	var out []aggregate.Sample
	for _, r := range rows {
		if m, ok := r.primary(); ok {
			out = append(out, aggregate.Sample{Valid: r.Valid, Metric: m})
		}
	}
	return out
}

// earlier orders runs by when they ran (their RFC 3339 timestamps), then
// by run id; a timestamp that does not parse sorts after those that do.
func earlier(a, b Row) bool {
	ta, ea := time.Parse(time.RFC3339Nano, a.Timestamp)
	tb, eb := time.Parse(time.RFC3339Nano, b.Timestamp)
	switch {
	case ea == nil && eb == nil && !ta.Equal(tb):
		return ta.Before(tb)
	case (ea == nil) != (eb == nil):
		return ea == nil
	}
	return a.RunID < b.RunID
}
