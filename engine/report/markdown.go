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

// linesTable has a row per X of the first series and a column per series,
// thinned to maxRows rows.
func linesTable(f Figure) Table {
	t := Table{Title: f.Title + " (" + f.YLabel + ")", Header: []string{f.XLabel}}
	for _, s := range f.Series {
		t.Header = append(t.Header, s.Name)
	}
	xs := f.Series[0].X
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
			row = append(row, cell(s, i))
		}
		t.Rows = append(t.Rows, row)
	}
	if every > 1 {
		t.Title += fmt.Sprintf(", every %d steps", every)
	}
	return t
}

func cell(s Series, i int) string {
	if i < len(s.Y) {
		return num(s.Y[i])
	}
	return ""
}
