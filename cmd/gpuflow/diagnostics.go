package main

import (
	"io"

	"github.com/hashicorp/hcl/v2"
)

// writeDiagnostics prints diagnostics the way HCL renders them: severity,
// summary, file:line:col, the source line with the range marked, detail.
func writeDiagnostics(w io.Writer, diags hcl.Diagnostics, sources map[string][]byte, colour bool) {
	if len(diags) == 0 {
		return
	}
	files := map[string]*hcl.File{}
	for name, src := range sources {
		files[name] = &hcl.File{Bytes: src}
	}
	dw := hcl.NewDiagnosticTextWriter(w, files, 100, colour)
	for _, d := range sortDiagnostics(diags) {
		dw.WriteDiagnostic(d)
	}
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
