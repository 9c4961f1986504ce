package aggregate

import (
	"fmt"
	"slices"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// Aggregate is an experiment's metrics over its repetitions
// (aggregate.json).
type Aggregate struct {
	Workload     string   `json:"workload"`
	Name         string   `json:"name"`
	Backend      string   `json:"backend"`
	ConfigHash   string   `json:"config_hash"`
	WorkloadHash string   `json:"workload_hash,omitempty"`
	Repetitions  int      `json:"repetitions"` // distinct repetitions (seeds)
	Valid        int      `json:"valid"`
	RunIDs       []string `json:"run_ids"`
	Seeds        []int64  `json:"seeds"`
	// Duplicates are runs left out because an earlier run had the same
	// seed and configuration: they repeat one sample, they are not
	// independent repetitions.
	Duplicates []string `json:"duplicates,omitempty"`
	Primary    string   `json:"primary"` // name of the primary metric
	Confidence float64  `json:"confidence"`
	// Metrics are the estimates of every metric, the primary first, then
	// in the order the results list them.
	Metrics []Estimate `json:"metrics"`
}

// Runs aggregates runs, which must be repetitions of one configuration,
// at confidence conf: a metric's repetitions enter its estimate as Of
// says, a run without a result (it never finished) counts as invalid,
// and a run repeating an earlier run's seed is left out as a duplicate.
func Runs(runs []record.Run, conf float64) Aggregate {
	a := Aggregate{Confidence: conf}
	kept, dups := DistinctSeeds(runs, func(r record.Run) (int64, string) { return r.Seed, r.RunID })
	a.Duplicates = dups
	for _, r := range kept {
		a.Workload, a.Name, a.Backend, a.ConfigHash, a.WorkloadHash = r.Workload, r.Name, r.Backend, r.ConfigHash, r.WorkloadHash
		a.RunIDs, a.Seeds = append(a.RunIDs, r.RunID), append(a.Seeds, r.Seed)
		if r.Valid && r.Result != nil {
			a.Valid++
		}
		if r.Result != nil && a.Primary == "" {
			a.Primary = r.Result.Primary.Name
		}
	}
	a.Repetitions = len(kept)
	for _, name := range metricNames(kept) {
		a.Metrics = append(a.Metrics, Of(samplesOf(kept, name), conf))
	}
	return a
}

// DistinctSeeds keeps the first of items (repetitions of one
// configuration) with each seed; the later ones repeat a sample and are
// returned as "<id> (seed S, as <first id>)".
func DistinctSeeds[T any](items []T, key func(T) (seed int64, id string)) (kept []T, dups []string) {
	seen := map[int64]string{}
	for _, it := range items {
		seed, id := key(it)
		if prev, dup := seen[seed]; dup {
			dups = append(dups, fmt.Sprintf("%s (seed %d, as %s)", id, seed, prev))
			continue
		}
		seen[seed] = id
		kept = append(kept, it)
	}
	return kept, dups
}

// Metric returns the estimate of the metric called name.
func (a Aggregate) Metric(name string) (Estimate, bool) {
	i := slices.IndexFunc(a.Metrics, func(e Estimate) bool { return e.Name == name })
	if i < 0 {
		return Estimate{}, false
	}
	return a.Metrics[i], true
}

// metricNames lists the metric names of runs' results in first-seen
// order, each primary first.
func metricNames(runs []record.Run) []string {
	var names []string
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, r := range runs {
		if r.Result != nil {
			add(r.Result.Primary.Name)
		}
	}
	for _, r := range runs {
		if r.Result == nil {
			continue
		}
		for _, m := range r.Result.Metrics {
			add(m.Name)
		}
	}
	return names
}

// samplesOf is every run's sample of the metric called name; a run that
// lacks it (no result, or a result without it) is a not measurable
// sample of an invalid or valid run as the run was.
func samplesOf(runs []record.Run, name string) []Sample {
	var def result.Def
	for _, r := range runs {
		if r.Result != nil {
			if m, ok := r.Result.Metric(name); ok {
				def = m.Def()
				break
			}
		}
	}
	out := make([]Sample, 0, len(runs))
	for _, r := range runs {
		s := Sample{Valid: r.Valid && r.Result != nil, Metric: def.NotMeasurable("the repetition has no such metric")}
		if r.Result != nil {
			if m, ok := r.Result.Metric(name); ok {
				s.Metric = m
			}
		}
		out = append(out, s)
	}
	return out
}
