package gate

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/sagebench/sagebench/internal/strictyaml"
	"golang.org/x/perf/benchunit"
)

// Policy is the gate configuration (YAML, strict). Default returns the
// values of the benchmark contract sagebench adopts.
type Policy struct {
	// Alpha is the significance level of the Mann-Whitney U test.
	Alpha float64 `yaml:"alpha"`
	// Confidence is the level of the median confidence intervals.
	Confidence float64 `yaml:"confidence"`
	// Ignore lists benchproc keys whose variation is ignored (e.g. "cpu").
	Ignore string `yaml:"ignore"`
	// Geomean fails a significant geomean regression beyond a threshold.
	Geomean GeomeanRule `yaml:"geomean"`
	// Expect lists benchmark symbols that must be present on both sides.
	Expect []string `yaml:"expect"`
	// Limits are absolute per-benchmark limits on the current side.
	Limits []Limit `yaml:"limits"`
	// Trend limits the growth of mean and p99 against the baseline.
	Trend TrendRule `yaml:"trend"`
	// Units declares the direction of units the built-in table does not
	// know: "lower-is-better" or "higher-is-better".
	Units map[string]string `yaml:"units"`
}

// GeomeanRule fails when the geomean over benchmarks present on both sides
// worsens by more than ThresholdPct, counting only significant changes.
type GeomeanRule struct {
	ThresholdPct float64  `yaml:"threshold_pct"`
	Units        []string `yaml:"units"` // units it applies to, e.g. ns/op
}

// Limit is an absolute limit for the benchmarks named Benchmark, matched
// as an expect entry is: an exact name with or without the Benchmark
// prefix and the -GOMAXPROCS suffix, a benchmark function (every
// sub-benchmark of it), or a prefix ending in '/'
// (BenchmarkAggregateParallel/). Written "regex:EXPR", it is the anchored
// regular expression EXPR instead. Zero means no limit.
type Limit struct {
	Benchmark string  `yaml:"benchmark"`
	MaxMeanMs float64 `yaml:"max_mean_ms"`
	MaxP99Ms  float64 `yaml:"max_p99_ms"`
}

// TrendRule limits mean and p99 growth against the baseline. A relative
// growth counts only when the absolute growth also exceeds the floor of
// its evidence's unit; below that unit's baseline floor the absolute
// floor alone decides. A unit without floors is judged by the relative
// limits alone.
type TrendRule struct {
	Disabled bool    `yaml:"disabled"`
	MeanPct  float64 `yaml:"mean_pct"`
	P99Pct   float64 `yaml:"p99_pct"`
	// MissingBaseline says what the rule does when there is no baseline:
	// "skip" (a NOTE line, the default) or "fail" (inconclusive).
	MissingBaseline string `yaml:"missing_baseline"`
	// Floors are keyed by the unit of the evidence: "ms" (per-request or
	// per-round latencies: requests.jsonl, pytest-benchmark JSON, mean-ms
	// and p99-ms metrics) or "sec/op" (Go benchmark time per op). A policy
	// that sets floors replaces the default ones.
	Floors map[string]TrendFloor `yaml:"floors"`
}

// TrendFloor is the absolute floors of one unit, in milliseconds.
type TrendFloor struct {
	MeanMs     float64 `yaml:"mean_ms"`
	P99Ms      float64 `yaml:"p99_ms"`
	BaselineMs float64 `yaml:"baseline_ms"`
}

// Values of TrendRule.MissingBaseline.
const (
	MissingSkip = "skip"
	MissingFail = "fail"
)

// floorUnits are the evidence units a trend floor can be set for.
var floorUnits = []string{"ms", "sec/op"}

// Unit direction names accepted in Policy.Units.
const (
	LowerIsBetter  = "lower-is-better"
	HigherIsBetter = "higher-is-better"
)

// Default is the contract: alpha 0.01, geomean time regression beyond
// +5 %, trend mean +10 % and p99 +15 % against a cached baseline, skipped
// when there is none; latencies in ms have the floors 0.05 ms (mean),
// 0.10 ms (p99) and baseline floor 0.10 ms. Go benchmark time per op has
// no floor: 0.05 ms is 500 times a 100 ns benchmark, so a floor there
// would keep the rule from ever firing.
func Default() Policy {
	return Policy{
		Alpha:      0.01,
		Confidence: 0.95,
		Geomean:    GeomeanRule{ThresholdPct: 5, Units: []string{"sec/op"}},
		Trend: TrendRule{MeanPct: 10, P99Pct: 15, MissingBaseline: MissingSkip,
			Floors: map[string]TrendFloor{"ms": {MeanMs: 0.05, P99Ms: 0.10, BaselineMs: 0.10}}},
	}
}

// LoadPolicy reads a YAML policy; keys it leaves out keep Default values
// and unknown keys are errors.
func LoadPolicy(path string) (Policy, error) {
	p := Default()
	b, err := strictyaml.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("reading policy: %w", err)
	}
	if err := strictyaml.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("policy %w", strictyaml.OneLine(path, b, err))
	}
	if reflect.ValueOf(p).IsZero() {
		// An empty document zeroes the policy; most likely a file that
		// was not written as meant.
		return p, fmt.Errorf("policy %s holds no settings: write the keys to change, or drop --policy for the defaults", path)
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

// Validate reports the first field out of range.
func (p Policy) Validate() error {
	var errs []error
	if !(p.Alpha > 0 && p.Alpha < 1) {
		errs = append(errs, fmt.Errorf("alpha %v must be in (0, 1)", p.Alpha))
	}
	if !(p.Confidence > 0 && p.Confidence < 1) {
		errs = append(errs, fmt.Errorf("confidence %v must be in (0, 1)", p.Confidence))
	}
	// A NaN or infinite number compares false with everything, so it would
	// switch its rule off silently: every number must be finite.
	if g := p.Geomean.ThresholdPct; !finite(g) || g < 0 {
		errs = append(errs, fmt.Errorf("geomean.threshold_pct %v must be finite and >= 0", g))
	}
	for i, l := range p.Limits {
		if err := l.validName(); err != nil {
			errs = append(errs, fmt.Errorf("limits[%d].benchmark %q: %w", i, l.Benchmark, err))
		}
		if !finite(l.MaxMeanMs) || !finite(l.MaxP99Ms) || l.MaxMeanMs < 0 || l.MaxP99Ms < 0 || (l.MaxMeanMs == 0 && l.MaxP99Ms == 0) {
			errs = append(errs, fmt.Errorf("limits[%d]: set max_mean_ms and/or max_p99_ms to a finite positive value", i))
		}
	}
	errs = append(errs, p.Trend.validate()...)
	for u, d := range p.Units {
		if d != LowerIsBetter && d != HigherIsBetter {
			errs = append(errs, fmt.Errorf("units[%s] = %q: want %s or %s", u, d, LowerIsBetter, HigherIsBetter))
		}
	}
	return errors.Join(errs...)
}

// RegexPrefix marks a limit's benchmark as a regular expression.
const RegexPrefix = "regex:"

// pattern is the limit's anchored regular expression, nil for an exact
// name.
func (l Limit) pattern() (*regexp.Regexp, error) {
	expr, ok := strings.CutPrefix(l.Benchmark, RegexPrefix)
	if !ok {
		return nil, nil
	}
	return regexp.Compile("^(?:" + expr + ")$")
}

func (l Limit) validName() error {
	if strings.TrimSpace(strings.TrimPrefix(l.Benchmark, RegexPrefix)) == "" {
		return errors.New("must name a benchmark (or regex:EXPR)")
	}
	if _, err := l.pattern(); err != nil {
		return fmt.Errorf("not a regular expression after %s: %w", RegexPrefix, err)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// geomeanUnit reports whether the geomean rule covers unit (compared in
// tidied form, so ns/op and sec/op are the same unit).
func (p Policy) geomeanUnit(unit string) bool {
	_, u := benchunit.Tidy(1, unit)
	for _, g := range p.Geomean.Units {
		if _, tg := benchunit.Tidy(1, g); tg == u {
			return true
		}
	}
	return false
}

func (t TrendRule) validate() []error {
	var errs []error
	for _, f := range []struct {
		name string
		v    float64
	}{{"mean_pct", t.MeanPct}, {"p99_pct", t.P99Pct}} {
		if !finite(f.v) || f.v < 0 {
			errs = append(errs, fmt.Errorf("trend.%s %v must be finite and >= 0", f.name, f.v))
		}
	}
	if t.MissingBaseline != MissingSkip && t.MissingBaseline != MissingFail {
		errs = append(errs, fmt.Errorf("trend.missing_baseline %q: want %s or %s", t.MissingBaseline, MissingSkip, MissingFail))
	}
	for u, f := range t.Floors {
		if !slices.Contains(floorUnits, u) {
			errs = append(errs, fmt.Errorf("trend.floors[%s]: unknown unit; want one of %s", u, strings.Join(floorUnits, ", ")))
		}
		for _, v := range []float64{f.MeanMs, f.P99Ms, f.BaselineMs} {
			if !finite(v) || v < 0 {
				errs = append(errs, fmt.Errorf("trend.floors[%s]: %v must be finite and >= 0", u, v))
			}
		}
	}
	return errs
}
