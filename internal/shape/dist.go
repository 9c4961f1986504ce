package shape

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Kinds of Dist.
const (
	Fixed     = "fixed"
	Uniform   = "uniform"
	Normal    = "normal"
	LogNormal = "lognormal"
	Empirical = "empirical"
)

// MaxTokens bounds every drawn length: far beyond any model's context,
// low enough that a typo cannot make the harness build gigabytes.
const MaxTokens = 1 << 20

// Dist is a distribution of token counts (or, for think times, of
// milliseconds). In YAML a bare number is fixed: `input_tokens: 256`;
// otherwise `{dist: uniform, min: 100, max: 400}`, `{dist: normal,
// mean: 550, sd: 150, min: 1, max: 2048}`, `{dist: lognormal, median:
// 500, sigma: 0.8, min: 1, max: 8192}`, `{dist: empirical, file:
// lengths.txt}` (one value per line) or `{dist: empirical, values: [..]}`.
// Draws are rounded and clamped to [min, max] (normal and lognormal
// redraw up to 16 times first, then clamp). The zero Dist is unset.
type Dist struct {
	Kind   string  `yaml:"dist" json:"dist"`
	Value  int     `yaml:"value,omitempty" json:"value,omitempty"`
	Min    int     `yaml:"min,omitempty" json:"min,omitempty"`
	Max    int     `yaml:"max,omitempty" json:"max,omitempty"`
	Mean   float64 `yaml:"mean,omitempty" json:"mean,omitempty"`
	SD     float64 `yaml:"sd,omitempty" json:"sd,omitempty"`
	Median float64 `yaml:"median,omitempty" json:"median,omitempty"`
	Sigma  float64 `yaml:"sigma,omitempty" json:"sigma,omitempty"`
	File   string  `yaml:"file,omitempty" json:"file,omitempty"`
	Values []int   `yaml:"values,omitempty" json:"values,omitempty"`
}

// FixedDist is the distribution that always gives n.
func FixedDist(n int) Dist { return Dist{Kind: Fixed, Value: n} }

// IsSet reports whether d was given.
func (d Dist) IsSet() bool { return d.Kind != "" }

// plainDist has Dist's fields without its methods.
type plainDist Dist

// UnmarshalYAML takes a bare integer as fixed, else the mapping (strict
// like the rest of the document).
func (d *Dist) UnmarshalYAML(unmarshal func(any) error) error {
	var n int
	if err := unmarshal(&n); err == nil {
		*d = FixedDist(n)
		return nil
	}
	return unmarshal((*plainDist)(d))
}

// MarshalYAML writes a fixed Dist as its number.
func (d Dist) MarshalYAML() (any, error) {
	if d.Kind == Fixed {
		return d.Value, nil
	}
	return plainDist(d), nil
}

// UnmarshalJSON takes a number as fixed, else the object.
func (d *Dist) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*d = FixedDist(n)
		return nil
	}
	return json.Unmarshal(b, (*plainDist)(d))
}

// MarshalJSON writes a fixed Dist as its number.
func (d Dist) MarshalJSON() ([]byte, error) {
	if d.Kind == Fixed {
		return json.Marshal(d.Value)
	}
	return json.Marshal(plainDist(d))
}

// Sampler draws from a compiled Dist.
type Sampler struct {
	d      Dist
	lo, hi int
	values []int // empirical
}

// Compile checks d and reads its file (empirical), naming key in errors.
func (d Dist) Compile(key string, lo int) (*Sampler, error) {
	s := &Sampler{d: d, lo: max(d.Min, lo), hi: d.Max}
	if s.hi == 0 {
		s.hi = MaxTokens
	}
	bad := func(format string, a ...any) error { return fmt.Errorf("%s: %s", key, fmt.Sprintf(format, a...)) }
	finite := func(vs ...float64) bool {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		return true
	}
	switch {
	case d.Min < 0 || d.Max < 0 || d.Max > MaxTokens || (d.Max > 0 && d.Max < s.lo):
		return nil, bad("min %d and max %d must satisfy %d ≤ min ≤ max ≤ %d", d.Min, d.Max, lo, MaxTokens)
	case !finite(d.Mean, d.SD, d.Median, d.Sigma):
		return nil, bad("parameters must be finite")
	}
	switch d.Kind {
	case Fixed:
		if d.Value < lo || d.Value > MaxTokens {
			return nil, bad("fixed value %d: must be in [%d, %d]", d.Value, lo, MaxTokens)
		}
	case Uniform:
		if d.Max == 0 {
			return nil, bad("uniform needs max (and min, default %d)", lo)
		}
	case Normal:
		if d.Mean <= 0 || d.SD < 0 {
			return nil, bad("normal needs mean > 0 and sd ≥ 0")
		}
	case LogNormal:
		if d.Median <= 0 || d.Sigma < 0 {
			return nil, bad("lognormal needs median > 0 and sigma ≥ 0")
		}
	case Empirical:
		return s.compileEmpirical(key, lo)
	case "":
		return nil, bad("dist is missing; give a number or {dist: fixed|uniform|normal|lognormal|empirical, …}")
	default:
		return nil, bad("unknown dist %q; use fixed, uniform, normal, lognormal or empirical", d.Kind)
	}
	return s, nil
}

func (s *Sampler) compileEmpirical(key string, lo int) (*Sampler, error) {
	vals := s.d.Values
	if s.d.File != "" {
		if len(vals) > 0 {
			return nil, fmt.Errorf("%s: give an empirical file or values, not both", key)
		}
		var err error
		if vals, err = readValues(s.d.File); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("%s: empirical needs a file or values", key)
	}
	for i, v := range vals {
		if v < lo || v > MaxTokens {
			return nil, fmt.Errorf("%s: empirical value %d (#%d) must be in [%d, %d]", key, v, i+1, lo, MaxTokens)
		}
	}
	s.values = vals
	return s, nil
}

// maxValues bounds an empirical file.
const maxValues = 10_000_000

// readValues reads one integer per line (blank lines and # comments
// skipped); a bad line is an error naming file:line.
func readValues(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		v, err := strconv.Atoi(t)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: want one integer per line, got %q", path, line, t)
		}
		if len(out) == maxValues {
			return nil, fmt.Errorf("%s: more than %d values", path, maxValues)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Bound is the largest value Draw can return.
func (s *Sampler) Bound() int {
	switch s.d.Kind {
	case Fixed:
		return s.d.Value
	case Empirical:
		return slices.Max(s.values)
	}
	return s.hi
}

// Draw returns one value.
func (s *Sampler) Draw(rng *rand.Rand) int {
	d := s.d
	switch d.Kind {
	case Fixed:
		return d.Value
	case Uniform:
		return s.lo + rng.IntN(s.hi-s.lo+1)
	case Empirical:
		return s.values[rng.IntN(len(s.values))]
	}
	var x float64
	for range 16 {
		if d.Kind == Normal {
			x = d.Mean + d.SD*rng.NormFloat64()
		} else {
			x = d.Median * math.Exp(d.Sigma*rng.NormFloat64())
		}
		if x >= float64(s.lo)-0.5 && x < float64(s.hi)+0.5 {
			break
		}
	}
	return min(max(int(math.Round(x)), s.lo), s.hi)
}
