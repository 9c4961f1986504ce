package chart

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LegendEntry is one legend item: its label and the thumbnails of the
// marks it explains.
type LegendEntry struct {
	Label  string
	Thumbs []plot.Thumbnailer
}

// Legend geometry.
const (
	thumbWidth = 16 * vg.Length(1)
	entryGap   = 12
	legendPad  = 4
)

// legendRows places the entries left to right, wrapping at width w:
// each row is the entries' indices, with each label shortened to fit.
func legendRows(entries []LegendEntry, w vg.Length) ([][]int, []string) {
	sty := textStyle(textSize, color.Black)
	labels := make([]string, len(entries))
	var rows [][]int
	x := vg.Length(0)
	avail := w - 2*legendPad
	for i, e := range entries {
		labels[i] = fit(e.Label, sty, avail-thumbWidth-vg.Points(4))
		ew := thumbWidth + vg.Points(4) + sty.Width(labels[i])
		if len(rows) == 0 || x+ew > avail {
			rows = append(rows, nil)
			x = 0
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], i)
		x += ew + vg.Points(entryGap)
	}
	return rows, labels
}

// fit shortens s with an ellipsis until it is at most w wide.
func fit(s string, sty draw.TextStyle, w vg.Length) string {
	if sty.Width(s) <= w {
		return s
	}
	r := []rune(s)
	for n := len(r) - 1; n > 0; n-- {
		if t := string(r[:n]) + "…"; sty.Width(t) <= w {
			return t
		}
	}
	return "…"
}

func rowHeight() vg.Length { return textStyle(textSize, color.Black).Height("Mg") + vg.Points(5) }

// legendHeight is the height of the legend strip at width w (0 without
// entries).
// LegendHeight is the height of f's legend strip at width w.
func (f *Figure) LegendHeight(w vg.Length) vg.Length { return f.legendHeight(w) }

func (f *Figure) legendHeight(w vg.Length) vg.Length {
	if len(f.Legend) == 0 {
		return 0
	}
	rows, _ := legendRows(f.Legend, w)
	return vg.Length(len(rows))*rowHeight() + vg.Points(2*legendPad)
}

// drawLegend draws the entries in rows across the strip c, above the
// panels: never over data.
func drawLegend(c draw.Canvas, entries []LegendEntry) {
	sty := textStyle(textSize, color.Black)
	rows, labels := legendRows(entries, c.Max.X-c.Min.X)
	rh := rowHeight()
	y := c.Max.Y - vg.Points(legendPad) - rh
	for _, row := range rows {
		x := c.Min.X + vg.Points(legendPad)
		for _, i := range row {
			icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y + vg.Points(2)}, Max: vg.Point{X: x + thumbWidth, Y: y + rh - vg.Points(2)}}}
			for _, t := range entries[i].Thumbs {
				t.Thumbnail(&icon)
			}
			tx := x + thumbWidth + vg.Points(4)
			c.FillText(sty, vg.Point{X: tx, Y: y + (rh-sty.Height("Mg"))/2 + sty.FontExtents().Descent}, labels[i])
			x = tx + sty.Width(labels[i]) + vg.Points(entryGap)
		}
		y -= rh
	}
}
