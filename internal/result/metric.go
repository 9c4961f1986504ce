package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// State says whether a metric has a value and what kind.
type State string

// The four states of a metric.
const (
	// Measured: Value holds a finite measurement inside the unit's domain.
	Measured State = "measured"
	// Bound: only bracketed; Interval holds the bracket (an infinite side
	// is open, written null in JSON).
	Bound State = "bound"
	// Never: a time that did not occur within the run (never recovered,
	// never violated); Reason says which.
	Never State = "never"
	// NotMeasurable: the run could not measure it; Reason says why.
	NotMeasurable State = "not_measurable"
)

// Direction says which way a metric improves.
type Direction string

// The two directions.
const (
	Higher Direction = "higher"
	Lower  Direction = "lower"
)

// Metric is one named quantity of a result. See the package doc for the
// meaning of State; Value is meaningful only when State is Measured.
type Metric struct {
	Name      string
	Value     float64
	Unit      string
	Direction Direction
	State     State
	// Interval is the confidence interval of a measured value, or the
	// bracket of a bound; nil when there is none.
	Interval *[2]float64
	// Resolution is the measurement's granularity (± this much), when it
	// has one worth saying (a recovery time found on a window grid).
	Resolution *float64
	// N is the number of samples behind the value (requests, windows,
	// probes); 0 when it does not apply.
	N int
	// Coverage is the exact coverage probability of Interval when the
	// method that made it states one (a quantile's order-statistic
	// interval: ≥ its nominal 95 %); 0 when not stated.
	Coverage float64
	// Reason says why a metric is never or not_measurable, or qualifies a
	// measured one ("at quick scale the p95 is judged").
	Reason string
}

// Def is a metric's definition: its name, unit and direction.
type Def struct {
	Name      string
	Unit      string
	Direction Direction
}

// Measure returns d measured at v over n samples; when v is not finite or
// n is 0 it returns d not measurable for reason why.
func (d Def) Measure(v float64, n int, why string) Metric {
	if n <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return d.NotMeasurable(why)
	}
	return Metric{Name: d.Name, Unit: d.Unit, Direction: d.Direction, State: Measured, Value: v, N: n}
}

// NotMeasurable returns d not measurable for reason why.
func (d Def) NotMeasurable(why string) Metric {
	return Metric{Name: d.Name, Unit: d.Unit, Direction: d.Direction, State: NotMeasurable, Reason: why}
}

// Never returns d in state never, for reason why ("never recovered by the
// end of the run").
func (d Def) Never(why string) Metric {
	return Metric{Name: d.Name, Unit: d.Unit, Direction: d.Direction, State: Never, Reason: why}
}

// Within returns d bracketed by [lo, hi] (either side may be infinite:
// open) over n samples, for reason why.
func (d Def) Within(lo, hi float64, n int, why string) Metric {
	return Metric{Name: d.Name, Unit: d.Unit, Direction: d.Direction, State: Bound, Interval: &[2]float64{lo, hi}, N: n, Reason: why}
}

// Def returns m's definition.
func (m Metric) Def() Def { return Def{Name: m.Name, Unit: m.Unit, Direction: m.Direction} }

// Measured reports whether m holds a value.
func (m Metric) Measured() bool { return m.State == Measured }

// WithInterval returns m with the interval [lo, hi].
func (m Metric) WithInterval(lo, hi float64) Metric {
	m.Interval = &[2]float64{lo, hi}
	return m
}

// WithCoverage returns m with its interval's coverage c.
func (m Metric) WithCoverage(c float64) Metric {
	m.Coverage = c
	return m
}

// WithResolution returns m with resolution ± r.
func (m Metric) WithResolution(r float64) Metric {
	m.Resolution = &r
	return m
}

// WithReason returns m with reason why.
func (m Metric) WithReason(why string) Metric {
	m.Reason = why
	return m
}

// In returns m with where it was measured ("under fair_share", "at
// engines=4") put before its reason.
func (m Metric) In(where string) Metric {
	if m.Reason == "" {
		m.Reason = where
	} else {
		m.Reason = where + ": " + m.Reason
	}
	return m
}

// Check reports the first way m breaks the model: an unknown state or
// direction, a measured value that is not finite or outside its unit's
// domain, an interval outside the domain or upside down, a never or
// not_measurable metric without a reason.
func (m Metric) Check() error {
	if m.Name == "" {
		return errors.New("metric without a name")
	}
	if m.Direction != Higher && m.Direction != Lower {
		return fmt.Errorf("metric %s: direction %q, want higher or lower", m.Name, m.Direction)
	}
	dom, ok := DomainOf(m.Unit)
	if !ok {
		return fmt.Errorf("metric %s: unit %q is not one of the known units", m.Name, m.Unit)
	}
	switch m.State {
	case Measured:
		if !dom.Contains(m.Value) {
			return fmt.Errorf("metric %s: measured value %v outside %s", m.Name, m.Value, dom)
		}
	case Bound:
		if m.Interval == nil {
			return fmt.Errorf("metric %s: a bound without its interval", m.Name)
		}
	case Never, NotMeasurable:
		if m.Reason == "" {
			return fmt.Errorf("metric %s: state %s without a reason", m.Name, m.State)
		}
	default:
		return fmt.Errorf("metric %s: unknown state %q", m.Name, m.State)
	}
	if iv := m.Interval; iv != nil {
		if math.IsNaN(iv[0]) || math.IsNaN(iv[1]) || iv[0] > iv[1] || !dom.ContainsClosed(iv[0]) || !dom.ContainsClosed(iv[1]) {
			return fmt.Errorf("metric %s: interval [%v, %v] outside %s or upside down", m.Name, iv[0], iv[1], dom)
		}
	}
	if c := m.Coverage; math.IsNaN(c) || c < 0 || c > 1 {
		return fmt.Errorf("metric %s: coverage %v outside [0, 1]", m.Name, c)
	}
	if r := m.Resolution; r != nil && (math.IsNaN(*r) || math.IsInf(*r, 0) || *r < 0) {
		return fmt.Errorf("metric %s: resolution %v, want finite and ≥ 0", m.Name, *r)
	}
	return nil
}

// metricJSON is Metric's form in run.json: value null unless measured,
// an interval's infinite side null.
type metricJSON struct {
	Name       string       `json:"name"`
	Value      *float64     `json:"value"`
	Unit       string       `json:"unit"`
	Direction  Direction    `json:"direction"`
	State      State        `json:"state"`
	Interval   *[2]*float64 `json:"interval,omitempty"`
	Resolution *float64     `json:"resolution,omitempty"`
	N          int          `json:"n,omitempty"`
	Coverage   float64      `json:"coverage,omitempty"`
	Reason     string       `json:"reason,omitempty"`
}

// MarshalJSON writes m with snake_case fields, value null unless measured.
func (m Metric) MarshalJSON() ([]byte, error) {
	j := metricJSON{Name: m.Name, Unit: m.Unit, Direction: m.Direction, State: m.State,
		Resolution: m.Resolution, N: m.N, Coverage: m.Coverage, Reason: m.Reason}
	if m.State == Measured {
		v := m.Value
		j.Value = &v
	}
	if iv := m.Interval; iv != nil {
		j.Interval = &[2]*float64{finitePtr(iv[0]), finitePtr(iv[1])}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; a null interval side is
// -Inf (low) or +Inf (high).
func (m *Metric) UnmarshalJSON(b []byte) error {
	var j metricJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = Metric{Name: j.Name, Unit: j.Unit, Direction: j.Direction, State: j.State,
		Resolution: j.Resolution, N: j.N, Coverage: j.Coverage, Reason: j.Reason}
	if j.Value != nil {
		m.Value = *j.Value
	}
	if j.Interval != nil {
		lo, hi := math.Inf(-1), math.Inf(1)
		if j.Interval[0] != nil {
			lo = *j.Interval[0]
		}
		if j.Interval[1] != nil {
			hi = *j.Interval[1]
		}
		m.Interval = &[2]float64{lo, hi}
	}
	return nil
}

func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
