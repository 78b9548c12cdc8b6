package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"
	"github.com/hashicorp/hcl/v2"
	"github.com/mitchellh/go-wordwrap"
)

// writeDiagnostics prints each diagnostic as: severity and summary, the
// place as file:line:col, the source line with the range marked, then the
// detail.
func writeDiagnostics(w io.Writer, diags hcl.Diagnostics, sources map[string][]byte, colour bool) {
	pal := newPalette(colour)
	for _, d := range sortDiagnostics(diags) {
		writeDiagnostic(w, d, sources, pal)
	}
}

func writeDiagnostic(w io.Writer, d *hcl.Diagnostic, sources map[string][]byte, pal *palette) {
	label, c := "Error", pal.red
	if d.Severity == hcl.DiagWarning {
		label, c = "Warning", pal.yellow
	}
	fmt.Fprintf(w, "%s %s\n", c.Add(color.Bold).Sprint(label+":"), pal.bold.Sprint(d.Summary))
	if d.Subject != nil {
		r := d.Subject
		fmt.Fprintf(w, "\n  on %s:%d:%d:\n", r.Filename, r.Start.Line, r.Start.Column)
		writeSnippet(w, r, sources[r.Filename], pal)
	}
	if d.Detail != "" {
		fmt.Fprintf(w, "\n%s\n", wordwrap.WrapString(d.Detail, 100))
	}
	fmt.Fprintln(w)
}

// writeSnippet prints the subject's first line with a caret line under the
// marked columns.
func writeSnippet(w io.Writer, r *hcl.Range, src []byte, pal *palette) {
	lines := bytes.Split(src, []byte("\n"))
	if r.Start.Line < 1 || r.Start.Line > len(lines) {
		return
	}
	line := strings.TrimRight(string(lines[r.Start.Line-1]), "\r")
	end := r.End.Column
	if r.End.Line != r.Start.Line || end > len(line)+1 {
		end = len(line) + 1
	}
	width := max(end-r.Start.Column, 1)
	prefix := fmt.Sprintf("  %4d | ", r.Start.Line)
	fmt.Fprintf(w, "%s%s\n", prefix, line)
	pad := strings.Repeat(" ", len(prefix)-2) + "| " + strings.Repeat(" ", max(r.Start.Column-1, 0))
	fmt.Fprintf(w, "%s%s\n", pad, pal.red.Sprint(strings.Repeat("^", width)))
}

// sortDiagnostics orders diagnostics by file and position, errors first
// within the same place, keeping unplaced ones (flag errors) at the top.
func sortDiagnostics(diags hcl.Diagnostics) hcl.Diagnostics {
	out := append(hcl.Diagnostics{}, diags...)
	less := func(a, b *hcl.Diagnostic) bool {
		if (a.Subject == nil) != (b.Subject == nil) {
			return a.Subject == nil
		}
		if a.Subject != nil && *a.Subject != *b.Subject {
			if a.Subject.Filename != b.Subject.Filename {
				return a.Subject.Filename < b.Subject.Filename
			}
			return a.Subject.Start.Byte < b.Subject.Start.Byte
		}
		return a.Severity < b.Severity
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && less(out[j], out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
