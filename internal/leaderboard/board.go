package leaderboard

import (
	"fmt"
	"math"
	"sort"

	"golang.org/x/perf/benchmath"
)

// Key groups repetitions of one configuration.
type Key struct {
	Workload    string `json:"workload"`
	Backend     string `json:"backend"`
	Nodes       int    `json:"nodes"`
	Parallelism int    `json:"parallelism"`
	ConfigHash  string `json:"config_hash"`
}

// Estimate is a mean with its confidence interval over repetitions; Lo
// and Hi are absent (nil) with fewer than two repetitions.
type Estimate struct {
	Mean float64  `json:"mean"`
	Lo   *float64 `json:"lo,omitempty"`
	Hi   *float64 `json:"hi,omitempty"`
}

// Metrics names the leaderboard's metrics, in column order, with their
// direction (+1 higher is better, -1 lower is better).
var Metrics = []struct {
	Name string
	Dir  int
	Of   func(Row) float64
}{
	{"throughput", +1, func(r Row) float64 { return r.Throughput }},
	{"latency_p50", -1, func(r Row) float64 { return r.LatencyP50 }},
	{"latency_p95", -1, func(r Row) float64 { return r.LatencyP95 }},
	{"latency_p99", -1, func(r Row) float64 { return r.LatencyP99 }},
	{"success_rate", +1, func(r Row) float64 { return r.SuccessRate }},
}

// Entry is one configuration on the leaderboard.
type Entry struct {
	Key
	Reps   int                 `json:"repetitions"`
	Seeds  []int64             `json:"seeds"`
	RunIDs []string            `json:"run_ids"`
	Values map[string]Estimate `json:"metrics"`
}

// Comparison is one backend against another on the same workload, shape
// and seeds: the difference of the means and the Welch t-test p-value.
type Comparison struct {
	Workload    string        `json:"workload"`
	Nodes       int           `json:"nodes"`
	Parallelism int           `json:"parallelism"`
	Base        string        `json:"base"`
	Other       string        `json:"other"`
	Seeds       []int64       `json:"seeds"`
	Metrics     []MetricDelta `json:"metrics"`
}

// MetricDelta compares one metric of two backends.
type MetricDelta struct {
	Metric      string  `json:"metric"`
	Base        float64 `json:"base_mean"`
	Other       float64 `json:"other_mean"`
	DeltaPct    float64 `json:"delta_pct"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
	Better      string  `json:"better,omitempty"` // the backend that wins, when significant
}

// Board is the whole leaderboard.
type Board struct {
	Entries     []Entry      `json:"entries"`
	Invalid     []Row        `json:"invalid"`
	Comparisons []Comparison `json:"comparisons"`
	Duplicates  int          `json:"duplicates"`
	Problems    []string     `json:"problems,omitempty"`
	Confidence  float64      `json:"confidence"`
	Alpha       float64      `json:"alpha"`
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
	b := &Board{Duplicates: c.Duplicates, Problems: c.Problems, Confidence: o.Confidence, Alpha: o.Alpha}
	groups := map[Key][]Row{}
	for _, r := range c.Rows {
		if !r.Valid {
			b.Invalid = append(b.Invalid, r)
			continue
		}
		k := Key{r.Workload, r.Backend, r.Nodes, r.Parallelism, r.ConfigHash}
		groups[k] = append(groups[k], r)
	}
	for k, rows := range groups {
		b.Entries = append(b.Entries, entryOf(k, rows, o.Confidence))
	}
	sort.Slice(b.Entries, func(i, j int) bool { return lessEntry(b.Entries[i], b.Entries[j]) })
	sort.Slice(b.Invalid, func(i, j int) bool { return b.Invalid[i].RunID < b.Invalid[j].RunID })
	b.Comparisons = compareBackends(c.Rows, o.Alpha)
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
	if ta, tb := a.Values["throughput"].Mean, b.Values["throughput"].Mean; ta != tb {
		return ta > tb
	}
	return a.Backend+a.ConfigHash < b.Backend+b.ConfigHash
}

func entryOf(k Key, rows []Row, conf float64) Entry {
	sort.Slice(rows, func(i, j int) bool { return rows[i].RunID < rows[j].RunID })
	e := Entry{Key: k, Reps: len(rows), Values: map[string]Estimate{}}
	seeds := map[int64]bool{}
	for _, r := range rows {
		e.RunIDs = append(e.RunIDs, r.RunID)
		if !seeds[r.Seed] {
			seeds[r.Seed] = true
			e.Seeds = append(e.Seeds, r.Seed)
		}
	}
	sort.Slice(e.Seeds, func(i, j int) bool { return e.Seeds[i] < e.Seeds[j] })
	for _, m := range Metrics {
		e.Values[m.Name] = estimate(values(rows, m.Of), conf)
	}
	return e
}

func values(rows []Row, of func(Row) float64) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = of(r)
	}
	return out
}

// estimate is the mean with a Student t interval (none below two values).
func estimate(xs []float64, conf float64) Estimate {
	s := benchmath.AssumeNormal.Summary(benchmath.NewSample(xs, &benchmath.DefaultThresholds), conf)
	e := Estimate{Mean: s.Center}
	if len(xs) >= 2 && !math.IsNaN(s.Lo) && !math.IsInf(s.Lo, 0) && !math.IsNaN(s.Hi) && !math.IsInf(s.Hi, 0) {
		e.Lo, e.Hi = &s.Lo, &s.Hi
	}
	return e
}
