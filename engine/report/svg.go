package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Chart geometry in SVG user units; the page scales it to its width.
const (
	chartW, chartH         = 720.0, 320.0
	padL, padR, padT, padB = 72.0, 16.0, 40.0, 48.0
	plotW, plotH           = chartW - padL - padR, chartH - padT - padB
	yTicks                 = 5
	refColour, gridColour  = "#d62728", "#e5e5e5"
	fontStyle              = `font-family="sans-serif" font-size="12"`
	textStyle              = fontStyle + ` fill="#333"`
)

// palette is colour-blind safe (Okabe and Ito).
var palette = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000"}

// SVG draws a figure as a standalone <svg> element.
func SVG(f Figure) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" role="img" aria-label="%s">`, chartW, chartH, html.EscapeString(f.Title))
	fmt.Fprintf(&b, `<text x="%g" y="20" %s font-weight="bold">%s</text>`, padL, textStyle, html.EscapeString(f.Title))
	switch f.Kind {
	case Lines:
		drawLines(&b, f)
	case Bars:
		drawBars(&b, f)
	case Heat:
		drawHeat(&b, f)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// yScale maps values to the plot's height, from zero (or the lowest value
// when it is negative) to a little over the highest value or reference.
type yScale struct{ lo, hi float64 }

func newYScale(f Figure) yScale {
	s := yScale{lo: 0, hi: math.Inf(-1)}
	for _, series := range f.Series {
		for _, y := range series.Y {
			s.lo, s.hi = min(s.lo, y), max(s.hi, y)
		}
	}
	for _, r := range f.Refs {
		s.hi = max(s.hi, r.Y)
	}
	if s.hi <= s.lo {
		s.hi = s.lo + 1
	}
	step := niceStep((s.hi - s.lo) / yTicks)
	s.lo, s.hi = math.Floor(s.lo/step)*step, math.Ceil(s.hi*1.02/step)*step
	return s
}

// niceStep rounds a tick step up to 1, 2 or 5 times a power of ten, so
// that tick labels read as round numbers.
func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func (s yScale) at(y float64) float64 { return padT + plotH*(1-(y-s.lo)/(s.hi-s.lo)) }

// axes draws the horizontal grid with value labels and the axis titles.
func (s yScale) axes(b *strings.Builder, f Figure) {
	step := niceStep((s.hi - s.lo) / yTicks)
	for v := s.lo; v <= s.hi+step/2; v += step {
		y := s.at(v)
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="%s"/>`, padL, y, padL+plotW, y, gridColour)
		fmt.Fprintf(b, `<text x="%g" y="%.1f" %s text-anchor="end">%s</text>`, padL-6, y+4, textStyle, num(v))
	}
	fmt.Fprintf(b, `<text x="%g" y="%g" %s text-anchor="middle">%s</text>`, padL+plotW/2, chartH-8, textStyle, html.EscapeString(f.XLabel))
	fmt.Fprintf(b, `<text x="14" y="%g" %s text-anchor="middle" transform="rotate(-90 14 %g)">%s</text>`, padT+plotH/2, textStyle, padT+plotH/2, html.EscapeString(f.YLabel))
}

// refs draws the reference lines, dashed, named at their right end.
func (s yScale) refs(b *strings.Builder, f Figure) {
	for _, r := range f.Refs {
		y := s.at(r.Y)
		fmt.Fprintf(b, `<line class="ref" x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="%s" stroke-dasharray="6 4" stroke-width="1.5"/>`, padL, y, padL+plotW, y, refColour)
		fmt.Fprintf(b, `<text x="%g" y="%.1f" %s text-anchor="end" fill="%s" stroke="#fff" stroke-width="4" paint-order="stroke">%s %s</text>`, padL+plotW-4, y-5, fontStyle, refColour, html.EscapeString(r.Name), num(r.Y))
	}
}

// legend names each series in its colour along the top right.
func legend(b *strings.Builder, names []string) {
	x := chartW - padR
	for i := len(names) - 1; i >= 0; i-- {
		w := 14 + 7*float64(len(names[i]))
		x -= w
		fmt.Fprintf(b, `<rect x="%.1f" y="10" width="10" height="10" fill="%s"/>`, x, palette[i%len(palette)])
		fmt.Fprintf(b, `<text x="%.1f" y="19" %s>%s</text>`, x+13, textStyle, html.EscapeString(names[i]))
	}
}

func seriesNames(f Figure) []string {
	names := make([]string, len(f.Series))
	for i, s := range f.Series {
		names[i] = s.Name
	}
	return names
}

// xScale maps X to the plot's width, linear or log 2.
type xScale struct {
	lo, hi float64
	log    bool
}

func newXScale(f Figure) xScale {
	s := xScale{lo: math.Inf(1), hi: math.Inf(-1), log: f.LogX}
	for _, series := range f.Series {
		for _, x := range series.X {
			x = s.value(x)
			s.lo, s.hi = min(s.lo, x), max(s.hi, x)
		}
	}
	if s.hi <= s.lo {
		s.hi = s.lo + 1
	}
	return s
}

func (s xScale) value(x float64) float64 {
	if s.log {
		return math.Log2(max(x, 1))
	}
	return x
}

func (s xScale) at(x float64) float64 { return padL + plotW*(s.value(x)-s.lo)/(s.hi-s.lo) }

// ticks labels X: at each power of two on a log axis, else evenly.
func (s xScale) ticks(b *strings.Builder, f Figure) {
	var at []float64
	if s.log {
		for e := math.Ceil(s.lo); e <= s.hi; e += math.Max(1, math.Ceil((s.hi-s.lo)/10)) {
			at = append(at, math.Exp2(e))
		}
	} else {
		for i := range 6 {
			at = append(at, math.Round(s.lo+(s.hi-s.lo)*float64(i)/5))
		}
	}
	for _, x := range at {
		label := num(x)
		if f.XBytes {
			label = bytesLabel(x)
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%g" %s text-anchor="middle">%s</text>`, s.at(x), padT+plotH+16, textStyle, label)
	}
}

func drawLines(b *strings.Builder, f Figure) {
	ys, xs := newYScale(f), newXScale(f)
	ys.axes(b, f)
	xs.ticks(b, f)
	for i, series := range f.Series {
		var pts []string
		for j := range series.X {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xs.at(series.X[j]), ys.at(series.Y[j])))
		}
		colour := palette[i%len(palette)]
		fmt.Fprintf(b, `<polyline class="series" fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, colour, strings.Join(pts, " "))
		if len(pts) <= 32 {
			for j := range series.X {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, xs.at(series.X[j]), ys.at(series.Y[j]), colour)
			}
		}
	}
	ys.refs(b, f)
	legend(b, seriesNames(f))
}

func drawBars(b *strings.Builder, f Figure) {
	ys := newYScale(f)
	ys.axes(b, f)
	group := plotW / float64(max(len(f.Labels), 1))
	bar := group * 0.8 / float64(max(len(f.Series), 1))
	for g, label := range f.Labels {
		x0 := padL + group*float64(g) + group*0.1
		for i, series := range f.Series {
			y := series.Y[g]
			fmt.Fprintf(b, `<rect class="series" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`,
				x0+bar*float64(i), ys.at(y), bar-2, ys.at(ys.lo)-ys.at(y), palette[i%len(palette)], html.EscapeString(series.Name), num(y))
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" %s text-anchor="middle">%s</text>`, x0+bar*(float64(i)+0.5), ys.at(y)-4, textStyle, num(y))
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%g" %s text-anchor="middle">%s</text>`, x0+group*0.4, padT+plotH+16, textStyle, html.EscapeString(label))
	}
	ys.refs(b, f)
	legend(b, seriesNames(f))
}

func drawHeat(b *strings.Builder, f Figure) {
	n := len(f.Matrix)
	cell := math.Min(plotW, plotH) / float64(max(n, 1))
	hi := 0.0
	for _, row := range f.Matrix {
		for _, v := range row {
			hi = max(hi, v)
		}
	}
	for i, row := range f.Matrix {
		fmt.Fprintf(b, `<text x="%g" y="%.1f" %s text-anchor="end">%s</text>`, padL-6, padT+cell*(float64(i)+0.5)+4, textStyle, html.EscapeString(f.Labels[i]))
		for j, v := range row {
			shade := 0.0
			if hi > 0 {
				shade = v / hi
			}
			x, y := padL+cell*float64(j), padT+cell*float64(i)
			fmt.Fprintf(b, `<rect class="series" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="rgb(%d,%d,%d)" stroke="#fff"/>`,
				x, y, cell, cell, 255-int(255*shade), 255-int(141*shade), 255-int(77*shade))
			if i != j {
				fmt.Fprintf(b, `<text x="%.1f" y="%.1f" %s text-anchor="middle">%s</text>`, x+cell/2, y+cell/2+4, textStyle, num(v))
			}
		}
	}
}
