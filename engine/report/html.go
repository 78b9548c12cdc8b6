package report

import (
	"html/template"
	"io"
)

// page is the whole report: styles inline and charts as inline SVG, so the
// file opens anywhere without a network.
var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"svg": func(f Figure) template.HTML { return template.HTML(SVG(f)) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>gpuflow report: {{.Workload}}</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 960px; color: #222; padding: 0 1em; }
section { border-top: 1px solid #ccc; margin-top: 2em; }
.meta { color: #555; }
.status-succeeded { color: #08711f; } .status-failed, .status-interrupted { color: #b00020; }
figure { margin: 1em 0; } svg { width: 100%; height: auto; background: #fff; }
table { border-collapse: collapse; margin: 1em 0; font-size: 14px; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: bold; padding: 4px 0; }
.note { background: #fff8e1; padding: 6px 10px; }
</style>
</head>
<body>
<h1>gpuflow report: {{.Workload}}</h1>
<p class="meta">The latest run of each stage recorded in state.</p>
{{range .Sections}}<section id="{{.Address}}">
<h2>stage.{{.Address}}</h2>
<p class="meta"><span class="status-{{.Status}}">{{.Status}}</span>{{if .RunID}} · run {{.RunID}}{{end}}{{if .Duration}} · {{.Duration}}{{end}}</p>
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}{{range .Figures}}<figure>{{svg .}}</figure>
{{end}}{{range .Tables}}{{if .Rows}}<table><caption>{{.Title}}</caption>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{end}}</section>
{{end}}</body>
</html>
`))

// HTML writes the report as one self-contained page.
func (r *Report) HTML(w io.Writer) error { return page.Execute(w, r) }
