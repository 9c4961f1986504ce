package report

import "html/template"

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font-family:"Liberation Sans",Arial,Helvetica,sans-serif;margin:0 auto;max-width:1100px;padding:1em 1.5em;color:#222;line-height:1.4}
h1{font-size:1.45em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2.2em}h3{font-size:1.05em;margin:1.4em 0 .4em}
.answer{font-size:1.15em;font-weight:600;border-left:4px solid #0072B2;padding:.3em .8em;background:#f3f8fc;margin:.8em 0}
.banner{padding:.5em 1em;border-radius:4px;margin:.6em 0;font-weight:600}
.valid{background:#e6f4ea;color:#1e6b34;border:1px solid #9fd3ae}
.invalid{background:#fde8e8;color:#b00020;border:1px solid #f3a5a5}
.mixed{background:#fff4e0;color:#7a4b00;border:1px solid #f0c36d}
.banner ul{margin:.3em 0 0 1.2em;font-weight:400}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.2em .55em;text-align:left;font-size:.9em;vertical-align:top}
td.num{text-align:right;white-space:nowrap}
figure{margin:1.2em 0}figure svg{width:100%;height:auto;display:block}
figcaption{font-size:.88em;color:#444;margin-bottom:.3em}
.tnote{font-size:.85em;color:#555;margin:.1em 0 .6em}
pre{background:#f6f6f6;padding:.6em;overflow:auto;font-size:.82em}
details{margin:.5em 0}summary{cursor:pointer;color:#334;font-weight:600}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>Generated {{.Generated}} by sagebench report. This page loads nothing from the network.</p>
{{if .Overview}}<h2 id="overview">Overview</h2>
<p class="tnote">Every run, in the order given: its answer, whether it is valid, and its targets. The Q links to its section.</p>
<div class="scroll"><table class="overview"><tr><th>Q</th><th>run</th><th>answer</th><th>validity</th><th>targets</th></tr>
{{range .Overview}}<tr><td><a href="#{{.Anchor}}">{{.Heading}}</a></td><td>{{.Label}}{{if ne .Label .RunID}} ({{.RunID}}){{end}}</td><td>{{.Answer}}</td><td>{{if .Valid}}valid{{else}}<strong>INVALID</strong>{{end}}</td><td>{{.Targets}}</td></tr>
{{end}}</table></div>{{end}}
{{range .Sections}}{{template "section" .}}{{end}}
</body>
</html>
{{define "section"}}<section class="q" id="section-{{if .ID}}{{.ID}}{{else}}1{{end}}">
<h2>{{.Heading}}{{if not .Single}} — {{len .Runs}} runs side by side{{end}}</h2>
{{if .Mixed}}<div class="banner mixed">{{.Mixed}}</div>{{end}}
{{if .Single}}{{with index .Runs 0}}
<p class="answer">{{.Answer}}</p>
{{template "validity" .}}
{{if .Targets}}<ul>{{range .Targets}}<li>target {{.}}</li>{{end}}</ul>{{end}}
{{end}}{{else}}
<div class="scroll"><table><tr><th>run</th><th>run id</th><th>backend</th><th>seed</th><th>validity</th><th>answer</th></tr>
{{range .Runs}}<tr><th>{{.Label}}</th><td>{{.RunID}}</td><td>{{.Backend}}</td><td class="num">{{.Seed}}</td><td>{{if .Valid}}valid{{else}}<strong>INVALID</strong>{{end}}</td><td>{{.Answer}}</td></tr>
{{end}}</table></div>
{{range .Runs}}{{if not .Valid}}<div class="banner invalid" data-valid="false">{{.Label}} ({{.RunID}}) is INVALID — do not compare its numbers.<ul>{{range .Reasons}}<li>{{.}}</li>{{end}}</ul></div>{{end}}{{end}}
{{end}}
{{with .Answer}}{{template "figure" .}}{{end}}
{{range $r := .Runs}}{{if $.Single}}{{template "tables" $r}}{{else}}<details{{if eq $r.Label "run1"}} open{{end}}><summary>{{$r.Label}}: the tables behind the answer</summary>{{template "tables" $r}}</details>{{end}}
{{range $r.Notes}}<p class="tnote">{{if not $.Single}}{{$r.Label}}: {{end}}Note: {{.}}</p>{{end}}{{end}}
{{range .Figures}}{{template "figure" .}}{{end}}
{{with .Compare}}<h3>Comparison across configurations</h3>
<p class="tnote">{{.Note}}</p>
{{range .Diffs}}<p class="tnote">Configurations differ in {{.}}</p>{{end}}
{{if .Rows}}<div class="scroll"><table><tr><th>metric</th>{{range $i, $s := .Sides}}<th>{{$s.Label}} ({{$s.Backend}})</th>{{if $i}}<th>p</th>{{end}}{{end}}</tr>
{{range $row := .Rows}}<tr><th>{{$row.Metric}}</th>{{range $i, $c := $row.Cells}}<td class="num">{{$c}}</td>{{if $i}}<td class="num">{{index $row.P $i}}</td>{{end}}{{end}}</tr>
{{end}}</table></div>{{end}}
{{range .Sides}}{{range .Agg.Duplicates}}<p class="tnote">Same seed again, left out of the estimates: {{.}}</p>{{end}}{{end}}
{{end}}
{{range .Runs}}
<h3>{{.Label}}{{if ne .Label .RunID}} ({{.RunID}}){{end}}: details</h3>
<div class="scroll"><table>{{range .Summary}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table></div>
{{if .Metrics}}<details><summary>every metric of the result ({{len .Metrics}})</summary><div class="scroll"><table>{{range .Metrics}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table></div></details>{{end}}
{{if .Raw}}<details><summary>scraped target metrics, raw keys ({{len .Raw}})</summary><div class="scroll"><table>{{range .Raw}}<tr><th>{{index . 0}}</th><td class="num">{{index . 1}}</td></tr>{{end}}</table></div></details>{{end}}
<details><summary>run_config</summary><pre>{{.Config}}</pre></details>
<details><summary>environment</summary><pre>{{.Environment}}</pre></details>
<p><small>directory: {{.Dir}}</small></p>
{{end}}
{{if .Scraped}}<details><summary>target metrics scraped during the run{{if not .Single}}s{{end}} ({{len .Scraped}} figures)</summary>
{{range .Scraped}}{{template "figure" .}}{{end}}</details>{{end}}
</section>
{{end}}
{{define "validity"}}{{if .Valid}}<div class="banner valid" data-valid="true">Valid and complete run.</div>
{{else}}<div class="banner invalid" data-valid="false">INVALID run — do not compare its numbers.
<ul>{{range .Reasons}}<li>{{.}}</li>{{end}}</ul></div>{{end}}{{end}}
{{define "figure"}}<figure id="{{.ID}}" class="figure"><figcaption><strong>{{.Title}}.</strong> {{.Caption}}</figcaption>{{.SVG}}</figure>
{{end}}
{{define "tables"}}{{range .Tables}}<h3>{{.Title}}</h3>{{if .Note}}<p class="tnote">{{.Note}}</p>{{end}}
<div class="scroll"><table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td{{if .Hint}} class="num" title="{{.Hint}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table></div>{{end}}{{end}}
`))
