package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"regexp"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is panels under one legend, or a message saying why there is
// nothing to draw.
type Figure struct {
	ID      string // file-name stem, unique in a report
	Title   string // for the caption; not drawn (captions carry titles)
	Caption string
	// Panels are drawn in a grid of Cols columns (0: all in one row);
	// a nil panel leaves its cell empty.
	Panels []*plot.Plot
	Cols   int
	// Runs > 1 says the grid is side by side: Runs columns, one per run,
	// each holding that run's panels (rows of one kind, Panels row-major).
	// When the runs do not fit at the drawn width (MinPanelWidth each),
	// they wrap into small multiples: as many runs per row as fit, each
	// run's panels stacked in its block, blocks one under the other.
	Runs   int
	Legend []LegendEntry
	// Message is drawn instead of panels when there are none: why the
	// figure has nothing to show ("not measurable: …").
	Message string
	// Width and Height: 0 takes PageWidth and a height from the grid
	// (RowHeight per row of panels, default 2.4 in, 2 in when narrower).
	Width, Height, RowHeight vg.Length
}

// Formats a figure renders to.
var Formats = []string{"svg", "pdf", "png"}

// Size returns the figure's width and height at width w (0: its own).
func (f *Figure) Size(w vg.Length) (vg.Length, vg.Length) {
	if w == 0 {
		w = f.Width
	}
	if w == 0 {
		w = PageWidth
	}
	switch {
	case f.Height > 0:
		return w, f.Height
	case len(f.Panels) == 0:
		return w, f.messageHeight(w)
	}
	rowH := f.RowHeight
	if rowH == 0 {
		rowH = 2.4 * vg.Inch
		if w < PageWidth {
			rowH = 2 * vg.Inch
		}
	}
	cols, panels := f.layoutAt(w)
	rows := (len(panels) + cols - 1) / cols
	return w, vg.Length(rows)*rowH + f.legendHeight(w)
}

// GridAt is the grid f is drawn in at width w (0: its own): columns
// and rows of panels.
func (f *Figure) GridAt(w vg.Length) (cols, rows int) {
	cols, panels := f.layoutAt(w)
	return cols, (len(panels) + cols - 1) / cols
}

// MinPanelWidth is the narrowest a panel of runs side by side is drawn:
// below it the runs wrap into small multiples.
const MinPanelWidth = 2.3 * vg.Inch

// layoutAt is f's grid at width w: its columns and its cells row-major
// (a nil cell is empty). Runs side by side that do not fit wrap.
func (f *Figure) layoutAt(w vg.Length) (int, []*plot.Plot) {
	if w == 0 {
		w = f.Width
	}
	if w == 0 {
		w = PageWidth
	}
	if f.Runs <= 1 || len(f.Panels)%f.Runs != 0 || vg.Length(f.Runs)*MinPanelWidth <= w {
		return f.cols(), f.Panels
	}
	k := max(1, int(w/MinPanelWidth))
	kinds := len(f.Panels) / f.Runs
	blocks := (f.Runs + k - 1) / k
	out := make([]*plot.Plot, blocks*kinds*k)
	for r := range kinds {
		for j := range f.Runs {
			out[((j/k)*kinds+r)*k+j%k] = f.Panels[r*f.Runs+j]
		}
	}
	return k, out
}

func (f *Figure) cols() int {
	if f.Cols <= 0 || f.Cols > len(f.Panels) {
		return max(1, len(f.Panels))
	}
	return f.Cols
}

// Render draws the figure at its own width as svg, pdf or png.
func (f *Figure) Render(format string) ([]byte, error) { return f.RenderAt(format, 0) }

// RenderAt draws the figure at width w (0: its own). A panic inside the
// plotting library (it panics on some degenerate data) becomes an error.
// The same figure gives the same bytes: no timestamps, one face.
func (f *Figure) RenderAt(format string, w vg.Length) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("figure %s: drawing failed: %v", f.ID, p)
		}
	}()
	w, h := f.Size(w)
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.New(w, h)
	case "pdf":
		pc := vgpdf.New(w, h)
		pc.EmbedFonts(true)
		c = pc
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(144), vgimg.UseBackgroundColor(color.White))}
	default:
		return nil, fmt.Errorf("figure %s: format %q: want one of %s", f.ID, format, strings.Join(Formats, ", "))
	}
	f.draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.ID, err)
	}
	switch format {
	case "svg":
		return fontFallback(buf.Bytes()), nil
	case "pdf":
		return pdfDates.ReplaceAll(buf.Bytes(), []byte("/${1} (D:20000101000000)")), nil
	}
	return buf.Bytes(), nil
}

// pdfDates are the PDF's creation and modification dates (the only
// bytes that vary between two renderings).
var pdfDates = regexp.MustCompile(`/(CreationDate|ModDate) \(D:\d{14}\)`)

// fontFallback names Arial and Helvetica, metric-compatible with
// Liberation Sans, for viewers without it.
func fontFallback(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"), []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
}

// InlineSVG renders the figure as an <svg> element for an HTML page
// (without the XML prolog and comments).
func (f *Figure) InlineSVG() ([]byte, error) {
	b, err := f.Render("svg")
	if err != nil {
		return nil, err
	}
	if i := bytes.Index(b, []byte("<svg")); i > 0 {
		b = b[i:]
	}
	return b, nil
}

// draw lays out the legend strip and the panel grid on dc.
func (f *Figure) draw(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if len(f.Panels) == 0 {
		f.drawMessage(dc)
		return
	}
	lh := f.legendHeight(dc.Max.X - dc.Min.X)
	if lh > 0 {
		strip := dc
		strip.Min.Y = dc.Max.Y - lh
		drawLegend(strip, f.Legend)
		dc.Max.Y -= lh
	}
	grid, canvases := f.grid(dc)
	for r := range grid {
		for c, p := range grid[r] {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
}

// grid lays f's panels out on dc (below the legend): the grid of cells
// and the canvas of each.
func (f *Figure) grid(dc draw.Canvas) ([][]*plot.Plot, [][]draw.Canvas) {
	cols, panels := f.layoutAt(dc.Max.X - dc.Min.X)
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for c := range cols {
			if i := r*cols + c; i < len(panels) {
				grid[r][c] = panels[i]
				if p := panels[i]; p != nil {
					roundAxis(&p.Y)
				}
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(10), PadY: vg.Points(8),
		PadTop: vg.Points(2), PadBottom: vg.Points(2), PadLeft: vg.Points(2), PadRight: vg.Points(6)}
	// Lay out once to learn each data area's width, fit the x labels to
	// it, and lay out again with them.
	canvases := plot.Align(grid, tiles, dc)
	for r := range grid {
		for c, p := range grid[r] {
			if p != nil {
				da := p.DataCanvas(canvases[r][c])
				fitXTicks(p, da.Max.X-da.Min.X)
				fitCategories(p, da.Max.X-da.Min.X)
			}
		}
	}
	return grid, plot.Align(grid, tiles, dc)
}

// BlankPanels lays f out at width w (0: its own) and names each panel
// that draws no data there (DataInk 0 in its cell): what a reader would
// see as an empty panel.
func (f *Figure) BlankPanels(w vg.Length) []string {
	w, h := f.Size(w)
	var rec recorder.Canvas
	dc := draw.Canvas{Canvas: &rec, Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h - f.legendHeight(w)}}}
	grid, canvases := f.grid(dc)
	var out []string
	for r := range grid {
		for c, p := range grid[r] {
			if p != nil && inkOn(p, canvases[r][c].Rectangle) == 0 {
				out = append(out, fmt.Sprintf("figure %s: panel %q (row %d, column %d) draws no data", f.ID, p.Title.Text, r+1, c+1))
			}
		}
	}
	return out
}

// messageHeight is the height of the message body at width w.
func (f *Figure) messageHeight(w vg.Length) vg.Length {
	sty := textStyle(textSize, color.Black)
	lines := wrap(f.message(), sty, w-vg.Points(24))
	return vg.Length(len(lines))*sty.Height("Mg")*1.3 + vg.Points(28)
}

func (f *Figure) message() string {
	if f.Message == "" {
		return "nothing to draw"
	}
	return f.Message
}

// drawMessage frames the message, wrapped to the width.
func (f *Figure) drawMessage(dc draw.Canvas) {
	sty := textStyle(textSize, Grey)
	pad := vg.Points(12)
	r := dc.Rectangle
	r.Min.X, r.Min.Y, r.Max.X, r.Max.Y = r.Min.X+2, r.Min.Y+2, r.Max.X-2, r.Max.Y-2
	dc.SetColor(LightGrey)
	dc.SetLineWidth(vg.Points(1))
	dc.Stroke(r.Path())
	lh := sty.Height("Mg") * 1.3
	y := dc.Max.Y - pad - sty.Height("Mg")
	for _, line := range wrap(f.message(), sty, dc.Max.X-dc.Min.X-2*pad) {
		dc.FillText(sty, vg.Point{X: dc.Min.X + pad, Y: y}, line)
		y -= lh
	}
}

// wrap breaks s into lines no wider than w in style sty (a word wider
// than w is cut).
func wrap(s string, sty draw.TextStyle, w vg.Length) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		for sty.Width(word) > w && len([]rune(word)) > 1 {
			r := []rune(word)
			n := len(r) - 1
			for n > 1 && sty.Width(string(r[:n])) > w {
				n--
			}
			if cur != "" {
				lines, cur = append(lines, cur), ""
			}
			lines = append(lines, string(r[:n]))
			word = string(r[n:])
		}
		switch {
		case cur == "":
			cur = word
		case sty.Width(cur+" "+word) <= w:
			cur += " " + word
		default:
			lines, cur = append(lines, cur), word
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}
