package chart

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sagebench/sagebench/internal/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Ticks marks a linear axis at round values: a step of 1, 2 or 5 times a
// power of ten giving 3 to 7 labelled ticks, labels with as many decimals as the step needs (never
// "2.50" for a step of 10) and thousands separators, never scientific
// notation.
type Ticks struct{}

var _ plot.Ticker = Ticks{}

// Ticks returns the ticks between lo and hi.
func (Ticks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		if isFinite(lo) {
			return []plot.Tick{{Value: lo, Label: Number(lo, 0)}}
		}
		return nil
	}
	step := niceStep((hi - lo) / 5)
	dec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var out []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v := k * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		out = append(out, plot.Tick{Value: v, Label: Number(v, dec)})
	}
	return out
}

// niceStep is the smallest 1, 2 or 5 × 10^k at least raw.
func niceStep(raw float64) float64 {
	if !(raw > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// Number writes v with dec decimals and thousands separators.
func Number(v float64, dec int) string {
	s := strconv.FormatFloat(v, 'f', dec, 64)
	neg := strings.HasPrefix(s, "-")
	out := result.Group(strings.TrimPrefix(s, "-"))
	if neg && strings.Trim(out, "0.,") != "" {
		out = "−" + out
	}
	return out
}

// LogTicks marks a log axis: labels at 1, 2 and 5 of each decade (only 1
// when the axis spans more than three decades; 1, 2, 3 and 5 — or 1 and
// 3 — when that labels fewer than three, every integer when that still
// does), unlabelled ticks at the other integers.
type LogTicks struct{}

var _ plot.Ticker = LogTicks{}

// Ticks returns the ticks between lo and hi (none unless 0 < lo < hi).
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	labelled, denser := []int{1, 2, 5}, []int{1, 2, 3, 5}
	if math.Log10(hi/lo) > 3 {
		labelled, denser = []int{1}, []int{1, 3}
	}
	out := logTicks(lo, hi, labelled)
	if count(out) < 3 {
		out = logTicks(lo, hi, denser)
	}
	if count(out) < 3 {
		out = logTicks(lo, hi, []int{1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	return out
}

// count is the number of labelled ticks.
func count(ticks []plot.Tick) int {
	n := 0
	for _, t := range ticks {
		if t.Label != "" {
			n++
		}
	}
	return n
}

func logTicks(lo, hi float64, labelled []int) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		dec := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * dec
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if slices.Contains(labelled, m) {
				t.Label = Number(v, max(0, -int(e)))
			}
			out = append(out, t)
		}
	}
	return out
}

// ValueTicks labels exactly the given values (numeric categories such as
// pool sizes: ticks at 1, 2 and 4 engines, none at 1.5).
type ValueTicks []float64

var _ plot.Ticker = ValueTicks(nil)

// Ticks returns a labelled tick per value inside [lo, hi].
func (vs ValueTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, v := range vs {
		if v >= lo && v <= hi {
			out = append(out, plot.Tick{Value: v, Label: Number(v, decimals(v))})
		}
	}
	return out
}

// decimals is how many decimals v needs (up to 3).
func decimals(v float64) int {
	for d := 0; d < 3; d++ {
		p := math.Pow(10, float64(d))
		if math.Abs(v*p-math.Round(v*p)) < 1e-9 {
			return d
		}
	}
	return 3
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// roundAxis widens a linear axis with round ticks to the ticks around
// its data, so the top bar or point sits under a labelled tick.
func roundAxis(a *plot.Axis) {
	_, ok := a.Tick.Marker.(Ticks)
	if !ok || !(a.Max > a.Min) || !isFinite(a.Min) || !isFinite(a.Max) {
		return
	}
	if _, lin := a.Scale.(plot.LinearScale); !lin {
		return
	}
	step := niceStep((a.Max - a.Min) / 5)
	a.Max = math.Ceil(a.Max/step-1e-9) * step
	a.Min = math.Floor(a.Min/step+1e-9) * step
}

// thinned is a ticker whose labels are thinned for an axis about width
// points long: a label that would come within a gap of a kept one loses
// its text (its tick stays). Labels at powers of ten are kept first.
type thinned struct {
	base  plot.Ticker
	scale plot.Normalizer
	width vg.Length
	style draw.TextStyle
}

var _ plot.Ticker = thinned{}

func (t thinned) Ticks(lo, hi float64) []plot.Tick {
	ticks := t.base.Ticks(lo, hi)
	type span struct{ a, b vg.Length }
	var kept []span
	fits := func(tk plot.Tick) (span, bool) {
		x := t.width * vg.Length(t.scale.Normalize(lo, hi, tk.Value))
		w := t.style.Width(tk.Label)/2 + vg.Points(3)
		s := span{x - w, x + w}
		for _, k := range kept {
			if s.a < k.b && k.a < s.b {
				return s, false
			}
		}
		return s, true
	}
	keep := make([]bool, len(ticks))
	for pass := range 2 {
		for i, tk := range ticks {
			if tk.Label == "" || keep[i] || (pass == 0) != isPowerOfTen(tk.Value) {
				continue
			}
			if s, ok := fits(tk); ok {
				kept, keep[i] = append(kept, s), true
			}
		}
	}
	out := make([]plot.Tick, len(ticks))
	for i, tk := range ticks {
		out[i] = tk
		if !keep[i] {
			out[i].Label = ""
		}
	}
	return out
}

func isPowerOfTen(v float64) bool {
	if v <= 0 {
		return false
	}
	e := math.Log10(v)
	return math.Abs(e-math.Round(e)) < 1e-9
}

// fitXTicks thins the x labels of a panel whose data area is about w
// points wide.
func fitXTicks(p *plot.Plot, w vg.Length) {
	base := p.X.Tick.Marker
	if t, ok := base.(thinned); ok {
		base = t.base
	}
	if _, ok := base.(plot.ConstantTicks); ok {
		return
	}
	p.X.Tick.Marker = thinned{base: base, scale: p.X.Scale, width: w, style: p.X.Tick.Label}
}
