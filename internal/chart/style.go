package chart

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure widths: a report page, a paper's single column and its full
// page width (two columns).
const (
	PageWidth   = 7 * vg.Inch
	ColumnWidth = 3.5 * vg.Inch
	DoubleWidth = 7 * vg.Inch
)

// Text sizes in points.
const (
	textSize  = 8.5
	titleSize = 9
	smallSize = 7.5
)

// face is the one typeface of every figure.
func face(size float64) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(size)}
}

// okabeIto is the Okabe–Ito palette, in the order series take it (yellow,
// weak on white, last).
var okabeIto = [...]color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, // blue
	{0xE6, 0x9F, 0x00, 0xff}, // orange
	{0x00, 0x9E, 0x73, 0xff}, // bluish green
	{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	{0x00, 0x00, 0x00, 0xff}, // black
	{0xF0, 0xE4, 0x42, 0xff}, // yellow
}

// Fixed colours for meaning, not series.
var (
	Grey      = color.RGBA{0x77, 0x77, 0x77, 0xff}
	LightGrey = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	SpanFill  = color.NRGBA{0xd5, 0x5e, 0x00, 0x30} // translucent vermillion: a fault
	PhaseFill = color.NRGBA{0x00, 0x72, 0xb2, 0x16} // translucent blue: alternate phases
	BoundInk  = color.RGBA{0xd5, 0x5e, 0x00, 0xff}
	ErrorInk  = color.RGBA{0xd5, 0x5e, 0x00, 0xff}
)

// Color is series i's colour.
func Color(i int) color.Color { return okabeIto[i%len(okabeIto)] }

// dashes are the line patterns, in the order series take them after the
// colours run out (and so that greyscale prints still tell lines apart).
var dashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(2)}, {vg.Points(1.5), vg.Points(1.5)}, {vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}}

// Dashes is series i's dash pattern: solid for the first colours, then
// patterns.
func Dashes(i int) []vg.Length { return dashes[(i/len(okabeIto))%len(dashes)] }

// Glyph is series i's marker shape.
func Glyph(i int) draw.GlyphDrawer {
	return [...]draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}[i%8]
}

// NewPanel returns an empty panel in the house style: the one face at
// its sizes, light grid lines, round-valued ticks, and no legend of its
// own (a Figure draws one legend for all its panels, outside the data).
func NewPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	styleAxes(p, x, y)
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = LightGrey, LightGrey
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	p.Add(g)
	return p
}

// NewCategoryPanel is NewPanel for bars over categories: no x label and
// no vertical grid lines.
func NewCategoryPanel(title, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	styleAxes(p, "", y)
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = nil, LightGrey
	g.Horizontal.Width = vg.Points(0.5)
	p.Add(g)
	return p
}

// styleAxes sets the title, axis labels and ticks in the house style.
func styleAxes(p *plot.Plot, x, y string) {
	p.Title.TextStyle.Font = face(titleSize)
	p.Title.Padding = vg.Points(4)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = face(textSize)
		a.Tick.Label.Font = face(smallSize)
		a.Tick.Marker = Ticks{}
		a.Padding = vg.Points(2)
		a.Label.Padding = vg.Points(2)
		a.Tick.Length = vg.Points(3)
	}
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.Legend.TextStyle.Font = face(textSize)
}

// textStyle is the house text style at size.
func textStyle(size float64, c color.Color) (s draw.TextStyle) {
	s = plot.New().Title.TextStyle
	s.Font, s.Color = face(size), c
	s.XAlign, s.YAlign = draw.XLeft, draw.YBottom
	return s
}
