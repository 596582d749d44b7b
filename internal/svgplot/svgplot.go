// Package svgplot draws line charts on log-log axes as SVG, with the
// standard library only: enough for cost curves (a figure against a
// scale across decades) that a person opens in a browser.
package svgplot

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Point is one measurement.
type Point struct{ X, Y float64 }

// Series is one line of a chart.
type Series struct {
	Name   string
	Points []Point // in order of X; points with X or Y ≤ 0 are skipped
	// Color is a CSS colour; Dash an SVG stroke-dasharray ("" for solid).
	Color, Dash string
}

// Chart is one panel: its series on log-log axes.
type Chart struct {
	Title, XLabel, YLabel string
	Series                []Series
}

// Panel geometry, in SVG user units.
const (
	width      = 900
	plotLeft   = 80
	plotTop    = 40
	plotWidth  = 560
	plotHeight = 320
	panelH     = plotTop + plotHeight + 60
	legendX    = plotLeft + plotWidth + 20
	legendLine = 16
)

// Palette is a set of distinct colours for series.
var Palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000"}

// Dashes are stroke patterns telling apart series of one colour.
var Dashes = []string{"", "6 3", "2 3", "10 3 2 3"}

// Write draws the charts one under the other as one SVG document.
func Write(w io.Writer, charts []Chart) error {
	var b strings.Builder
	h := panelH * max(1, len(charts))
	for _, c := range charts {
		// A long legend makes its panel taller.
		h += max(0, len(c.Series)*legendLine-plotHeight)
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, h, width, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, h)
	y0 := 0
	for _, c := range charts {
		drawChart(&b, c, y0)
		y0 += panelH + max(0, len(c.Series)*legendLine-plotHeight)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// decades returns the powers of ten that bracket the values.
func decades(vs []float64) (lo, hi int) {
	mn, mx := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		mn, mx = min(mn, v), max(mx, v)
	}
	if math.IsInf(mn, 1) {
		return 0, 1
	}
	lo, hi = int(math.Floor(math.Log10(mn))), int(math.Ceil(math.Log10(mx)))
	if hi == lo {
		hi++
	}
	return lo, hi
}

// Label writes a power of ten or a value shortly: 1k, 10k, 1M, 0.01.
func Label(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return trim(v/1e9) + "G"
	case a >= 1e6:
		return trim(v/1e6) + "M"
	case a >= 1e3:
		return trim(v/1e3) + "k"
	}
	return trim(v)
}

func trim(v float64) string {
	s := fmt.Sprintf("%.3g", v)
	return s
}

func drawChart(b *strings.Builder, c Chart, y0 int) {
	var xs, ys []float64
	for _, s := range c.Series {
		for _, p := range s.Points {
			if p.X > 0 && p.Y > 0 {
				xs, ys = append(xs, p.X), append(ys, p.Y)
			}
		}
	}
	xlo, xhi := decades(xs)
	ylo, yhi := decades(ys)
	px := func(x float64) float64 {
		return plotLeft + (math.Log10(x)-float64(xlo))/float64(xhi-xlo)*plotWidth
	}
	py := func(y float64) float64 {
		return float64(y0+plotTop+plotHeight) - (math.Log10(y)-float64(ylo))/float64(yhi-ylo)*plotHeight
	}
	top, bottom := y0+plotTop, y0+plotTop+plotHeight
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="15" font-weight="bold">%s</text>`+"\n", plotLeft, y0+plotTop-16, html.EscapeString(c.Title))
	// Grid and ticks: one line a decade, lighter lines at 2 to 9.
	for d := xlo; d <= xhi; d++ {
		x := px(math.Pow(10, float64(d)))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ccc"/>`+"\n", x, top, x, bottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, bottom+16, Label(math.Pow(10, float64(d))))
		for k := 2; k < 10 && d < xhi; k++ {
			x := px(float64(k) * math.Pow(10, float64(d)))
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/>`+"\n", x, top, x, bottom)
		}
	}
	for d := ylo; d <= yhi; d++ {
		y := py(math.Pow(10, float64(d)))
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ccc"/>`+"\n", plotLeft, y, plotLeft+plotWidth, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-6, y+4, Label(math.Pow(10, float64(d))))
		for k := 2; k < 10 && d < yhi; k++ {
			y := py(float64(k) * math.Pow(10, float64(d)))
			fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>`+"\n", plotLeft, y, plotLeft+plotWidth, y)
		}
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", plotLeft, top, plotWidth, plotHeight)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", plotLeft+plotWidth/2, bottom+36, html.EscapeString(c.XLabel))
	fmt.Fprintf(b, `<text transform="translate(%d %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", 20, top+plotHeight/2, html.EscapeString(c.YLabel))
	for i, s := range c.Series {
		var pts []string
		for _, p := range s.Points {
			if p.X > 0 && p.Y > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.X), py(p.Y)))
			}
		}
		dash := ""
		if s.Dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, s.Dash)
		}
		fmt.Fprintf(b, `<polyline class="series" fill="none" stroke="%s" stroke-width="2"%s points="%s"><title>%s</title></polyline>`+"\n",
			s.Color, dash, strings.Join(pts, " "), html.EscapeString(s.Name))
		for _, p := range pts {
			xy := strings.Split(p, ",")
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`+"\n", xy[0], xy[1], s.Color)
		}
		ly := top + 8 + i*legendLine
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", legendX, ly, legendX+28, ly, s.Color, dash)
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", legendX+34, ly+4, html.EscapeString(s.Name))
	}
}
