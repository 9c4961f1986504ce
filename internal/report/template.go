package report

import (
	"html/template"
	"sort"
)

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;padding:1em 1.5em;color:#222}
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
.banner{padding:.6em 1em;border-radius:4px;margin:.8em 0;font-weight:600}
.valid{background:#e6f4ea;color:#1e6b34;border:1px solid #9fd3ae}
.invalid{background:#fde8e8;color:#b00020;border:1px solid #f3a5a5}
.invalid ul{margin:.3em 0 0 1.2em;font-weight:400}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left;font-size:.92em}
figure{margin:1.2em 0}figure svg{max-width:100%;height:auto;display:block}
figcaption{font-size:.88em;color:#555;margin-top:.2em}
pre{background:#f6f6f6;padding:.6em;overflow:auto;font-size:.82em}
details{margin:.5em 0}summary{cursor:pointer;color:#334}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>Generated {{.Generated}} by sagebench report; {{len .Runs}} run{{if .Multi}}s{{end}}. This page loads nothing from the network.</p>
{{range $i, $r := .Runs}}
<section class="run" id="run-{{$i}}">
<h2>{{$r.Workload}} {{$r.Name}} — {{$r.Label}}</h2>
{{if $r.Valid}}<div class="banner valid" data-valid="true">Valid and complete run.</div>
{{else}}<div class="banner invalid" data-valid="false">INVALID run — do not compare its numbers.
<ul>{{range $r.Reasons}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
<table>{{range $r.Rows}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table>
{{range $r.Notes}}<p class="note">Note: {{.}}</p>{{end}}
{{range $r.Figures}}<figure id="{{.ID}}" class="figure"><figcaption><strong>{{.Title}}.</strong> {{.Caption}}</figcaption>{{.SVG}}</figure>
{{end}}
<details><summary>run_config</summary><pre>{{$r.Config}}</pre></details>
<details><summary>environment</summary><pre>{{$r.Environment}}</pre></details>
<p><small>directory: {{$r.Dir}}</small></p>
</section>
{{end}}
{{if .Multi}}
<section id="comparison">
<h2>Comparison</h2>
<table><tr><th>run</th>{{range .Runs}}<th>{{.Label}}{{if not .Valid}} (invalid){{end}}</th>{{end}}</tr>
<tr><th>backend</th>{{range .Runs}}<td>{{.Backend}}</td>{{end}}</tr>
</table>
{{range .Comparison}}<figure id="{{.ID}}" class="figure"><figcaption><strong>{{.Title}}.</strong> {{.Caption}}</figcaption>{{.SVG}}</figure>
{{end}}
<details open><summary>compare statistics (medians, CIs, Mann-Whitney p across repetitions)</summary><pre>{{.CompareText}}</pre></details>
</section>
{{end}}
</body>
</html>
`))
