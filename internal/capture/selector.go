package capture

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultMaxSeries is the cardinality cap when a Selector leaves it zero.
const DefaultMaxSeries = 2000

// Selector chooses the series a capture keeps. Names are regular
// expressions matched against the whole metric name (none: every name);
// Labels are matchers k=v, k!=v, k=~re or k!~re that must all hold.
// MaxSeries caps how many series one scrape may keep (0: DefaultMaxSeries).
type Selector struct {
	Names     []string
	Labels    []string
	MaxSeries int

	names  []*regexp.Regexp
	labels []labelMatcher
}

type labelMatcher struct {
	name   string
	op     string
	value  string
	re     *regexp.Regexp
	negate bool
}

// CardinalityError reports a scrape with more selected series than the cap.
type CardinalityError struct {
	Source string
	Got    int
	Max    int
}

func (e *CardinalityError) Error() string {
	return fmt.Sprintf("%s: %d series match, more than the cap of %d; narrow the selection with --match/--label or raise --max-series", e.Source, e.Got, e.Max)
}

// Compile checks and compiles the expressions; it must be called before
// Keep or Apply.
func (s *Selector) Compile() error {
	s.names, s.labels = nil, nil
	for _, n := range s.Names {
		re, err := regexp.Compile("^(?:" + n + ")$")
		if err != nil {
			return fmt.Errorf("match %q: %w", n, err)
		}
		s.names = append(s.names, re)
	}
	for _, l := range s.Labels {
		m, err := parseLabelMatcher(l)
		if err != nil {
			return err
		}
		s.labels = append(s.labels, m)
	}
	if s.MaxSeries < 0 {
		return fmt.Errorf("max series %d: want 0 (default %d) or more", s.MaxSeries, DefaultMaxSeries)
	}
	return nil
}

func parseLabelMatcher(l string) (labelMatcher, error) {
	for _, op := range []string{"!~", "=~", "!=", "="} {
		i := strings.Index(l, op)
		if i <= 0 {
			continue
		}
		m := labelMatcher{name: strings.TrimSpace(l[:i]), op: op, value: strings.Trim(l[i+len(op):], `"`)}
		m.negate = op[0] == '!'
		if strings.HasSuffix(op, "~") {
			re, err := regexp.Compile("^(?:" + m.value + ")$")
			if err != nil {
				return m, fmt.Errorf("label matcher %q: %w", l, err)
			}
			m.re = re
		}
		return m, nil
	}
	return labelMatcher{}, fmt.Errorf("label matcher %q: want NAME=VALUE, NAME!=VALUE, NAME=~RE or NAME!~RE", l)
}

func (m labelMatcher) matches(labels map[string]string) bool {
	v := labels[m.name]
	ok := v == m.value
	if m.re != nil {
		ok = m.re.MatchString(v)
	}
	return ok != m.negate
}

// Keep reports whether the series is selected.
func (s *Selector) Keep(x Series) bool {
	if len(s.names) > 0 {
		hit := false
		for _, re := range s.names {
			if re.MatchString(x.Name) {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	for _, m := range s.labels {
		if !m.matches(x.Labels) {
			return false
		}
	}
	return true
}

// Apply keeps the selected series of one scrape, failing with a
// *CardinalityError when more than the cap remain.
func (s *Selector) Apply(source string, in []Series) ([]Series, error) {
	limit := s.limit()
	out := in[:0:0]
	for _, x := range in {
		if s.Keep(x) {
			out = append(out, x)
		}
	}
	if len(out) > limit {
		return nil, &CardinalityError{Source: source, Got: len(out), Max: limit}
	}
	return out, nil
}

// limit is the cardinality cap (DefaultMaxSeries when MaxSeries is 0).
func (s *Selector) limit() int {
	if s.MaxSeries == 0 {
		return DefaultMaxSeries
	}
	return s.MaxSeries
}
