package chart

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// DataInk draws p at w × h and counts the fills and strokes made in a
// series colour (or its lighter twin): the bars, lines and points a
// reader takes for data — not grids, text, spans, bounds or events. The
// vermillion series colour is left out, since bounds and errors share
// it. A panel that draws data has DataInk > 0; a blank one has 0.
func DataInk(p *plot.Plot, w, h vg.Length) int {
	return inkOn(p, vg.Rectangle{Max: vg.Point{X: w, Y: h}})
}

// inkOn draws p in the cell r and counts its data ink (DataInk).
func inkOn(p *plot.Plot, r vg.Rectangle) int {
	data := map[color.RGBA]bool{}
	for i, c := range okabeIto {
		if i == 3 { // vermillion: BoundInk, ErrorInk
			continue
		}
		data[rgba(c)], data[rgba(lighten(c))] = true, true
	}
	var rec recorder.Canvas
	p.Draw(draw.Canvas{Canvas: &rec, Rectangle: r})
	n := 0
	cur := false
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			cur = a.Color != nil && data[rgba(a.Color)]
		case *recorder.Fill, *recorder.Stroke:
			if cur {
				n++
			}
		}
	}
	return n
}

func rgba(c color.Color) color.RGBA {
	r, g, b, a := c.RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}
