package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	xfont "golang.org/x/image/font"
	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ImageFormat is a format figures can be written in.
type ImageFormat string

const (
	PNG ImageFormat = "png"
	SVG ImageFormat = "svg"
)

// ImageFormats returns the formats figures can be written in.
func ImageFormats() []ImageFormat { return []ImageFormat{PNG, SVG} }

// Figures are 1200×800 pixels at 96 dpi: SVG says 900×600 pt, which browsers
// show at 1200×800 px.
const (
	plotDPI = 96
	// FigureWidth and FigureHeight are a figure's default size.
	FigureWidth  = 1200 * vg.Inch / plotDPI
	FigureHeight = 800 * vg.Inch / plotDPI
)

const svgFontFamily = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"

// Figure is one picture: a title over a grid of panels.
type Figure struct {
	Title string
	// Cols is the number of panels per row; Panels are row-major, and a nil
	// panel leaves its cell empty.
	Cols   int
	Panels []*gonum.Plot
	// Width and Height default to FigureWidth and FigureHeight.
	Width, Height vg.Length
	// Note, if set, is one line under the panels: how to read a marking.
	Note string
	// legend is drawn once for the figure, in rows between the title and
	// the panels, so that it never covers data.
	legend []legendItem
}

// legendItem is one entry of a figure's legend: its label and the marks
// drawn as its sample.
type legendItem struct {
	label  string
	thumbs []gonum.Thumbnailer
}

// addLegend adds an entry to the figure's legend once: panels that draw
// the same series each add it.
func (f *Figure) addLegend(label string, thumbs ...gonum.Thumbnailer) {
	if !slices.ContainsFunc(f.legend, func(it legendItem) bool { return it.label == label }) {
		f.legend = append(f.legend, legendItem{label, thumbs})
	}
}

func (f *Figure) size() (vg.Length, vg.Length) {
	w, h := f.Width, f.Height
	if w <= 0 {
		w = FigureWidth
	}
	if h <= 0 {
		h = FigureHeight
	}
	return w, h
}

// Write renders the figure as "svg" or "png". The same figure always gives
// the same SVG bytes.
func (f *Figure) Write(w io.Writer, format ImageFormat) error {
	width, height := f.size()
	switch format {
	case SVG:
		c := vgsvg.New(width, height)
		if err := f.draw(draw.New(c)); err != nil {
			return err
		}
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return err
		}
		// Fonts are not embedded: name metric-compatible fallbacks so that
		// viewers without Liberation fonts still draw a sans-serif face.
		_, err := w.Write(bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"), []byte(svgFontFamily)))
		return err
	case PNG:
		c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(plotDPI), vgimg.UseBackgroundColor(color.White))
		if err := f.draw(draw.New(c)); err != nil {
			return err
		}
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	}
	return fmt.Errorf("unknown plot format %q (want png or svg)", format)
}

// draw lays the panels out under the title. gonum/plot panics on some
// inputs; that becomes an error here.
func (f *Figure) draw(dc draw.Canvas) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing %q: %v", f.Title, r)
		}
	}()
	if f.Cols <= 0 || len(f.Panels) == 0 {
		return errors.New("figure has no panels")
	}
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if f.Title != "" {
		sty := titleStyle()
		pt := vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - vg.Points(8)}
		dc.FillText(sty, pt, f.Title)
	}
	if f.Note != "" {
		sty := noteStyle()
		dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Min.Y + vg.Points(6)}, f.Note)
	}
	lay := f.layout(dc)
	sty := legendStyle()
	for _, it := range lay.legend {
		icon := &draw.Canvas{Canvas: dc.Canvas, Rectangle: it.icon}
		for _, t := range it.thumbs {
			t.Thumbnail(icon)
		}
		dc.FillText(sty, it.text.Min, it.label)
	}
	for r := range lay.grid {
		for c, p := range lay.grid[r] {
			if p != nil {
				p.Draw(lay.cells[r][c])
			}
		}
	}
	return nil
}

// figureLayout is where a figure's parts go.
type figureLayout struct {
	grid  [][]*gonum.Plot
	cells [][]draw.Canvas // the canvas each panel of grid is drawn on
	// legend are the legend's entries placed; legendBox holds them all
	// (empty without a legend).
	legend    []placedLegendItem
	legendBox vg.Rectangle
}

type placedLegendItem struct {
	legendItem
	icon, text vg.Rectangle
}

// Legend entries: a sample legendThumb wide, the label legendGap after
// it, legendSep between entries, rows legendRowGap apart.
var legendThumb, legendGap, legendSep, legendRowGap = vg.Points(20), vg.Points(5), vg.Points(18), vg.Points(4)

func legendStyle() text.Style {
	sty := noteStyle()
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	return sty
}

// layout places the title, the legend's rows (centred, wrapped to the
// figure's width) under it, and the panels in a grid under those, on dc,
// the whole figure.
func (f *Figure) layout(dc draw.Canvas) figureLayout {
	var lay figureLayout
	if f.Title != "" {
		dc.Max.Y -= titleStyle().Height(f.Title) + vg.Points(14)
	}
	if len(f.legend) > 0 {
		lay.legend, lay.legendBox = placeLegend(f.legend, dc.Rectangle)
		dc.Max.Y = lay.legendBox.Min.Y - vg.Points(6)
	}
	if f.Note != "" {
		dc.Min.Y += noteStyle().Height(f.Note) + vg.Points(10)
	}
	rows := (len(f.Panels) + f.Cols - 1) / f.Cols
	grid := make([][]*gonum.Plot, rows)
	for r := range grid {
		grid[r] = make([]*gonum.Plot, f.Cols)
		for c := range grid[r] {
			if i := r*f.Cols + c; i < len(f.Panels) {
				grid[r][c] = f.Panels[i]
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: f.Cols,
		PadTop: vg.Points(4), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10),
		PadX: vg.Points(18), PadY: vg.Points(14)}
	lay.grid, lay.cells = grid, gonum.Align(grid, tiles, dc)
	return lay
}

// placeLegend lays items out left to right in rows from the top of area,
// each row centred, a new row when the next entry would not fit; it
// returns them placed and the box they fill.
func placeLegend(items []legendItem, area vg.Rectangle) ([]placedLegendItem, vg.Rectangle) {
	sty := legendStyle()
	rowH := sty.FontExtents().Height
	width := func(it legendItem) vg.Length { return legendThumb + legendGap + sty.Width(it.label) }
	left, right := area.Min.X+vg.Points(10), area.Max.X-vg.Points(10)
	var rows [][]legendItem
	x := right
	for _, it := range items {
		if w := width(it); x+w > right && x > left || len(rows) == 0 {
			rows = append(rows, nil)
			x = left
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], it)
		x += width(it) + legendSep
	}
	var placed []placedLegendItem
	top := area.Max.Y
	box := vg.Rectangle{Min: vg.Point{X: right, Y: top}, Max: vg.Point{X: left, Y: top}}
	for r, row := range rows {
		used := -legendSep
		for _, it := range row {
			used += width(it) + legendSep
		}
		x := left + max(0, (right-left-used)/2)
		y := top - vg.Length(r+1)*rowH - vg.Length(r)*legendRowGap // the row's bottom
		for _, it := range row {
			icon := vg.Rectangle{Min: vg.Point{X: x, Y: y + rowH*0.15}, Max: vg.Point{X: x + legendThumb, Y: y + rowH*0.85}}
			tx := x + legendThumb + legendGap
			txt := vg.Rectangle{Min: vg.Point{X: tx, Y: y}, Max: vg.Point{X: tx + sty.Width(it.label), Y: y + rowH}}
			placed = append(placed, placedLegendItem{it, icon, txt})
			box.Min.X, box.Max.X = min(box.Min.X, x), max(box.Max.X, txt.Max.X)
			box.Min.Y = y
			x = txt.Max.X + legendSep
		}
	}
	return placed, box
}

func titleStyle() text.Style {
	sty := gonum.New().Title.TextStyle
	sty.Font.Variant = "Sans"
	sty.Font.Size = vg.Points(16)
	sty.Font.Weight = xfont.WeightBold
	sty.XAlign = draw.XCenter
	sty.YAlign = draw.YTop
	return sty
}

func noteStyle() text.Style {
	sty := titleStyle()
	sty.Font.Size = vg.Points(11)
	sty.Font.Weight = xfont.WeightNormal
	sty.YAlign = draw.YBottom
	return sty
}

// newPanel returns a plot with the house style: title, axis labels, grid.
func newPanel(title, xLabel, yLabel string) *gonum.Plot {
	p := gonum.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.Legend.TextStyle.Font.Size = vg.Points(11)
	for _, f := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		f.Font.Variant = "Sans"
	}
	p.X.Tick.Marker = niceTicks{}
	p.Y.Tick.Marker = niceTicks{}
	return p
}

// niceTicks puts about eight labelled ticks at multiples of 1, 2 or 5 times
// a power of ten, with an unlabelled tick between each pair. Labels group
// thousands ("2,500,000") and zero is "0", never "-0".
type niceTicks struct{}

// Ticks implements gonum.Ticker.
func (niceTicks) Ticks(lo, hi float64) []gonum.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return gonum.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 8
	// mag = 10^exp, the largest power of ten <= raw, found by plain
	// multiplication and division (no math.Pow or Log10), so every platform
	// computes the same ticks and so the same SVG bytes.
	mag, exp := 1.0, 0
	for mag*10 <= raw {
		mag, exp = mag*10, exp+1
	}
	for mag > raw {
		mag, exp = mag/10, exp-1
	}
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	prec := max(0, -exp)
	if step >= 10*mag {
		prec = max(0, -exp-1)
	}
	var ticks []gonum.Tick
	// Products are converted explicitly so they are never fused into a
	// multiply-add, which would round differently on some platforms.
	for i := math.Ceil(lo / step); ; i++ {
		v := i * step
		if v > hi+float64(step*1e-9) {
			break
		}
		if v == 0 {
			v = 0 // not -0 when lo < 0
		}
		ticks = append(ticks, gonum.Tick{Value: v, Label: plotNumber(v, prec)})
		if minor := v + step/2; minor <= hi {
			ticks = append(ticks, gonum.Tick{Value: minor})
		}
	}
	if first := float64(math.Ceil(lo/step)*step) - step/2; first >= lo {
		ticks = append([]gonum.Tick{{Value: first}}, ticks...)
	}
	return ticks
}

// Colours are color.NRGBA, never color.RGBA: RGBA is alpha-premultiplied, so
// a translucent RGBA built from an opaque colour's channels is invalid (its
// channels exceed its alpha) and renders as some other colour.

// palette gives policy i its colour, the same in every plot: Tableau 10,
// then ten more from the Tableau and d3 category palettes, each picked as
// the farthest (CIELAB) from those before it, black and near-black left
// out (the capacity line's): 20 policies get 20 colours at least 21 apart
// (Tableau 10's closest pair: 26). Beyond 20 the colours repeat.
var palette = []color.NRGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0xe1, 0x57, 0x59, 0xff}, {0x76, 0xb7, 0xb2, 0xff},
	{0x59, 0xa1, 0x4f, 0xff}, {0xed, 0xc9, 0x48, 0xff}, {0xb0, 0x7a, 0xa1, 0xff}, {0xff, 0x9d, 0xa7, 0xff},
	{0x9c, 0x75, 0x5f, 0xff}, {0xba, 0xb0, 0xac, 0xff},
	{0x39, 0x3b, 0x79, 0xff}, {0xff, 0xbe, 0x7d, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0xe6, 0x55, 0x0d, 0xff},
	{0x84, 0x3c, 0x39, 0xff}, {0x63, 0x63, 0x63, 0xff}, {0x63, 0x79, 0x39, 0xff}, {0xa0, 0xcb, 0xe8, 0xff},
	{0x7b, 0x41, 0x73, 0xff}, {0x8c, 0x6d, 0x31, 0xff},
}

// PolicyColor returns the colour of the i-th policy.
func PolicyColor(i int) color.NRGBA { return palette[i%len(palette)] }

var (
	// Admitted requests are dark blue from the Okabe–Ito palette: apart
	// from every class of rejection for every kind of colour vision and
	// in lightness too (greyscale prints), besides their place in a bar.
	colorAdmitted = color.NRGBA{0x00, 0x72, 0xb2, 0xff}
	// Admitted work answered after its client had gone (wasted): sky
	// blue, a lighter kin of admitted, between it and rejected.
	colorWasted   = color.NRGBA{0x56, 0xb4, 0xe9, 0xff}
	colorCapacity = color.NRGBA{0x20, 0x20, 0x20, 0xff}
	// Rejections by class, the same wherever they are drawn: 429
	// (retry-after) the light orange rejections always had, 529
	// (capacity) vermillion, transient failures reddish purple (all
	// Okabe–Ito), terminal ones the light grey of the give-up reason
	// "terminal" (reasonColors).
	colorRetryAfter = color.NRGBA{0xe6, 0x9f, 0x00, 0xff}
	colorOverloaded = color.NRGBA{0xd5, 0x5e, 0x00, 0xff}
	colorTransient  = color.NRGBA{0xcc, 0x79, 0xa7, 0xff}
	colorTerminal   = color.NRGBA{0xbf, 0xbf, 0xbf, 0xff}
	// The load figure's bars: first attempts light yellow at the bottom,
	// retries dark vermillion on top (Okabe–Ito; a contrast ratio of 2.9,
	// so greyscale keeps them apart); its lines: goodput bluish green,
	// in flight reddish purple (dotted), local rejections blue.
	colorFirstAttempts = color.NRGBA{0xf0, 0xe4, 0x42, 0xff}
	colorRetries       = color.NRGBA{0xd5, 0x5e, 0x00, 0xff}
	colorGoodput       = color.NRGBA{0x00, 0x9e, 0x73, 0xff}
	colorInFlight      = color.NRGBA{0xcc, 0x79, 0xa7, 0xff}
	colorLocalRejected = color.NRGBA{0x00, 0x72, 0xb2, 0xff}
	colorGrid          = color.NRGBA{0xdd, 0xdd, 0xdd, 0xff}
)
