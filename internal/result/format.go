package result

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatValue writes v in unit for a reader: fixed point with digits by
// magnitude and thousands separators, fractions as percentages, ratios
// with ×; never scientific notation.
func FormatValue(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "−∞"
	}
	switch unit {
	case Fraction:
		p := 100 * v
		if p > 99 && p < 99.995 || p > 0 && p < 1 {
			return strconv.FormatFloat(p, 'f', 2, 64) + " %"
		}
		return strconv.FormatFloat(p, 'f', 1, 64) + " %"
	case Index:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case Ratio:
		return Number(v) + "×"
	case Percent:
		s := strconv.FormatFloat(v, 'f', 1, 64) + " %"
		if v > 0 {
			s = "+" + s
		}
		return s
	case Count:
		if v == math.Trunc(v) {
			return Group(strconv.FormatFloat(v, 'f', 0, 64))
		}
		return Number(v) // a mean count: 13.3, not "13.3 count"
	}
	return Number(v) + " " + unit
}

// Number writes v with digits by magnitude (≥ 100: none, ≥ 10: one,
// ≥ 1: two, below: three significant) and thousands separators.
func Number(v float64) string {
	a := math.Abs(v)
	var s string
	switch {
	case a >= 100 || a == 0:
		s = strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	default:
		d := max(3-int(math.Floor(math.Log10(a)))-1, 3)
		s = strconv.FormatFloat(v, 'f', min(d, 9), 64)
	}
	return Group(s)
}

// Group puts thousands separators into the integer part of a decimal
// ("-1234.5" → "-1,234.5").
func Group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if len(intPart) <= 3 {
		return sign + s
	}
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return sign + b.String()
}

// Short is m for a table cell: the value (± its resolution), a bracket,
// "never" or "–".
func Short(m Metric) string {
	switch m.State {
	case Measured:
		s := FormatValue(m.Value, m.Unit)
		if r := m.Resolution; r != nil && *r > 0 {
			s += " ± " + FormatValue(*r, m.Unit)
		}
		return s
	case Bound:
		return bracket(m)
	case Never:
		return "never"
	}
	return "–"
}

// ShortN is Short with the sample size behind m, for a sentence that
// must say what a quantile or a share rests on: "151 ms (n = 200)",
// "≥ 16.2 ms (n = 6)".
func ShortN(m Metric) string {
	if m.N <= 0 {
		return Short(m)
	}
	return fmt.Sprintf("%s (n = %d)", Short(m), m.N)
}

// Format is m for a sentence: Short, with the interval of a measured
// value and the reason of a state.
func Format(m Metric) string {
	switch m.State {
	case Measured:
		s := Short(m)
		if iv := m.Interval; iv != nil {
			s += fmt.Sprintf(" (95 %% CI %s–%s)", bare(iv[0], m.Unit), bare(iv[1], m.Unit))
		}
		return s
	case Bound:
		return bracket(m)
	case Never:
		return "never (" + m.Reason + ")"
	}
	return "not measurable (" + m.Reason + ")"
}

// bracket writes a bound: "12–16 req/s", "≥ 1,200 ms" or "≤ 3 s".
func bracket(m Metric) string {
	lo, hi := m.Interval[0], m.Interval[1]
	switch {
	case math.IsInf(hi, 1):
		return "≥ " + FormatValue(lo, m.Unit)
	case math.IsInf(lo, -1):
		return "≤ " + FormatValue(hi, m.Unit)
	}
	return bare(lo, m.Unit) + "–" + FormatValue(hi, m.Unit)
}

// bare is FormatValue without the unit's suffix (for the first end of a
// range).
func bare(v float64, unit string) string {
	s := FormatValue(v, unit)
	for _, suf := range []string{" " + unit, " %", "×"} {
		if strings.HasSuffix(s, suf) && (suf != " %" || unit == Fraction || unit == Percent) {
			return strings.TrimSuffix(s, suf)
		}
	}
	return s
}

// MeanCI writes a mean with its confidence interval for a table, with
// as many decimals as two significant digits of the half-width: "829 ±
// 290 ms", "100.3 ± 2.8 req/s", "92.5 ± 1.2 %" (fractions in percent,
// the ± in percentage points). An interval that is not symmetric about
// the mean (clipped at the edge of the metric's domain) is written as
// its ends: "99.2 (97.1–100.0) %". The unit always ends the text. Never
// scientific notation.
func MeanCI(mean, lo, hi float64, unit string) string {
	scale, suffix := 1.0, " "+unit
	switch unit {
	case Fraction:
		scale, suffix = 100, " %"
	case Ratio:
		suffix = "×"
	case Count:
		suffix = ""
	case Percent:
		suffix = " %"
	}
	m, l, h := mean*scale, lo*scale, hi*scale
	half := (h - l) / 2
	dec := 0
	if half > 0 && !math.IsInf(half, 0) {
		dec = min(max(1-int(math.Floor(math.Log10(half))), 0), 6)
	}
	f := func(v float64) string { return Group(strconv.FormatFloat(v, 'f', dec, 64)) }
	if math.Abs((h-m)-(m-l)) <= 1e-9*math.Max(1, math.Abs(m)) {
		return f(m) + " ± " + f(half) + suffix
	}
	return f(m) + " (" + f(l) + "–" + f(h) + ")" + suffix
}

// Mean is m for a table of estimates: a measured value with its
// interval as MeanCI writes it, without one as FormatValue does, any
// other state as Short.
func Mean(m Metric) string {
	if m.State != Measured {
		return Short(m)
	}
	if iv := m.Interval; iv != nil {
		return MeanCI(m.Value, iv[0], iv[1], m.Unit)
	}
	return FormatValue(m.Value, m.Unit)
}
