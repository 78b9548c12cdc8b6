package report

import (
	"fmt"
	"io"
	"strings"
)

// maxRows bounds a per-step figure written as a table: a comment shows
// every Nth step, the last one always.
const maxRows = 11

// Markdown writes the report as headings and tables, the figures as the
// tables of their values, for a pull-request comment.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# gpuflow report: %s\n", r.Workload)
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "\n## stage.%s\n\n%s", s.Address, s.Status)
		if s.RunID != "" {
			fmt.Fprintf(&b, " · run %s", s.RunID)
		}
		if s.Duration > 0 {
			fmt.Fprintf(&b, " · %s", s.Duration)
		}
		b.WriteString("\n")
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "\n> %s\n", n)
		}
		for _, f := range s.Figures {
			writeTable(&b, figureTable(f))
			for _, ref := range f.Refs {
				fmt.Fprintf(&b, "\n%s: %s %s\n", ref.Name, num(ref.Y), f.YLabel)
			}
		}
		for _, t := range s.Tables {
			writeTable(&b, t)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTable(b *strings.Builder, t Table) {
	if len(t.Rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### %s\n\n| %s |\n|%s\n", t.Title, strings.Join(t.Header, " | "), strings.Repeat(" --- |", len(t.Header)))
	for _, row := range t.Rows {
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
}

// figureTable turns a figure into the table of what it draws.
func figureTable(f Figure) Table {
	switch f.Kind {
	case Bars:
		t := Table{Title: f.Title + " (" + f.YLabel + ")", Header: append([]string{""}, seriesNames(f)...)}
		for i, label := range f.Labels {
			row := []string{label}
			for _, s := range f.Series {
				row = append(row, num(s.Y[i]))
			}
			t.Rows = append(t.Rows, row)
		}
		return t
	case Heat:
		t := Table{Title: f.Title, Header: append([]string{""}, f.Labels...)}
		for i, row := range f.Matrix {
			cells := []string{f.Labels[i]}
			for _, v := range row {
				cells = append(cells, num(v))
			}
			t.Rows = append(t.Rows, cells)
		}
		return t
	}
	return linesTable(f)
}

// linesTable has a row per X of the series with the fewest points (a loss
// figure's validations, say), thinned to maxRows rows, and a column per
// series with its value at that X.
func linesTable(f Figure) Table {
	t := Table{Title: f.Title + " (" + f.YLabel + ")", Header: []string{f.XLabel}}
	for _, s := range f.Series {
		t.Header = append(t.Header, s.Name)
	}
	xs := sparsest(f.Series).X
	every := max(1, (len(xs)+maxRows-2)/(maxRows-1))
	for i := range xs {
		if i%every != 0 && i != len(xs)-1 {
			continue
		}
		x := num(xs[i])
		if f.XBytes {
			x = bytesLabel(xs[i])
		}
		row := []string{x}
		for _, s := range f.Series {
			row = append(row, valueAt(s, xs[i]))
		}
		t.Rows = append(t.Rows, row)
	}
	switch {
	case every > 1 && f.XBytes:
		t.Title += fmt.Sprintf(", every %d sizes", every)
	case every > 1:
		t.Title += fmt.Sprintf(", every %d steps", int(xs[every]-xs[0]))
	}
	return t
}

// sparsest is the first of the series with the fewest points.
func sparsest(series []Series) Series {
	out := series[0]
	for _, s := range series[1:] {
		if len(s.X) < len(out.X) {
			out = s
		}
	}
	return out
}

// valueAt is the series' value at x, empty where it has none.
func valueAt(s Series, x float64) string {
	for i, sx := range s.X {
		if sx == x && i < len(s.Y) {
			return num(s.Y[i])
		}
	}
	return ""
}
