package run

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/redact"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// The run's records pass one redaction rule, the target's (redact: its
// API key and admin token in any encoding, credential-like fields, URL
// passwords), at the two places every byte that came from a peer goes
// through before a file or the terminal: each request record in the
// sink, and the outcome and run.json before they are written or printed.
// Workloads redact what they quote too; this is the layer that holds
// whatever a workload (or a load worker over NATS) forgets.

// maxExtraKey bounds a summary.target_metrics key (a scraped series name with its
// labels can be anything a target sends).
const maxExtraKey = 512

// cleanRequest applies the rule to the strings of a request record that
// can hold a peer's text. Engine and node ids repeat, so their clean form
// is cached in seen (the sink's own map: one goroutine uses it).
func cleanRequest(red *redact.Redactor, seen map[string]string, r *record.Request) {
	if r.Error != "" {
		r.Error = red.String(r.Error)
	}
	if r.Note != "" {
		r.Note = red.String(r.Note)
	}
	r.Engine = cachedField(red, seen, r.Engine)
	r.Node = cachedField(red, seen, r.Node)
}

func cachedField(red *redact.Redactor, seen map[string]string, s string) string {
	if s == "" {
		return s
	}
	if v, ok := seen[s]; ok {
		return v
	}
	v := red.Field(s, record.MaxFieldBytes)
	if len(seen) < 1024 && len(s) <= record.MaxFieldBytes {
		seen[s] = v
	}
	return v
}

// cleanOutcome applies the rule to what a workload reports in words:
// notes, invalid reasons, unified row metadata and its record files. Its
// result reaches words only through run.json's, which cleanRun cleans
// (with the verdicts derived from it).
func cleanOutcome(red *redact.Redactor, o workload.Outcome) workload.Outcome {
	o.Notes = cleanStrings(red, o.Notes)
	o.Invalid = cleanStrings(red, o.Invalid)
	for i := range o.Rows {
		if md, ok := cleanJSONValue(red, o.Rows[i].Metadata).(map[string]any); ok {
			o.Rows[i].Metadata = md
		}
		if p := o.Rows[i].Primary; p != nil {
			p.Reason = red.String(p.Reason)
		}
	}
	for i, f := range o.Files {
		o.Files[i].Data = cleanFile(red, f.Name, f.Data)
	}
	return o
}

// cleanRun applies the rule to run.json's free text: notes, invalid
// reasons, the target's description, summary.target_metrics keys and the
// result.
func cleanRun(red *redact.Redactor, run *record.Run) {
	run.Notes = cleanStrings(red, run.Notes)
	run.InvalidReasons = cleanStrings(red, run.InvalidReasons)
	run.Target = red.String(run.Target)
	run.Summary.TargetMetrics = cleanKeys(red, run.Summary.TargetMetrics)
	if run.Result != nil {
		res := cleanResult(red, *run.Result)
		run.Result = &res
	}
}

// cleanResult applies the rule to every string of a result (its JSON
// form, so no field is forgotten); a result with nothing to mask is
// returned as it is.
func cleanResult(red *redact.Redactor, res result.Result) result.Result {
	b, err := json.Marshal(res)
	if err != nil {
		return res
	}
	clean := cleanJSON(red, b)
	if bytes.Equal(clean, b) {
		return res
	}
	var out result.Result
	if json.Unmarshal(clean, &out) != nil {
		return result.New("not answered: the result held text that could not be redacted", res.Primary.Def().NotMeasurable("redacted"))
	}
	return out
}

func cleanStrings(red *redact.Redactor, ss []string) []string {
	for i, s := range ss {
		ss[i] = red.String(s)
	}
	return ss
}

// cleanKeys redacts and bounds the keys of m (two keys that become one
// keep the later value).
func cleanKeys(red *redact.Redactor, m map[string]float64) map[string]float64 {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[red.Field(k, maxExtraKey)] = v
	}
	return out
}

// cleanJSON applies the rule to every string (keys too) of a JSON
// document or of each line of a JSON-lines file; text that is not JSON
// gets the rule as text.
func cleanJSON(red *redact.Redactor, b []byte) []byte {
	if red.String(string(b)) == string(b) {
		return b // nothing to mask: the bytes stay as they are
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || record.Trailing(dec) {
		return []byte(red.String(string(b)))
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cleanJSONValue(red, v)); err != nil {
		return []byte(red.String(string(b)))
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

func cleanJSONValue(red *redact.Redactor, v any) any {
	switch x := v.(type) {
	case string:
		return red.String(x)
	case []any:
		for i := range x {
			x[i] = cleanJSONValue(red, x[i])
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[red.String(k)] = cleanJSONValue(red, e)
		}
		return out
	}
	return v
}

// cleanFile applies the rule to a record file: per line for JSON lines,
// per document for JSON, as text otherwise.
func cleanFile(red *redact.Redactor, name string, data []byte) []byte {
	if red.String(string(data)) == string(data) {
		return data
	}
	switch filepath.Ext(name) {
	case ".jsonl":
		lines := strings.SplitAfter(string(data), "\n")
		var b bytes.Buffer
		for _, l := range lines {
			body := strings.TrimSuffix(l, "\n")
			if body != "" {
				b.Write(cleanJSON(red, []byte(body)))
			}
			if len(body) < len(l) {
				b.WriteByte('\n')
			}
		}
		return b.Bytes()
	case ".json":
		return cleanJSON(red, data)
	}
	return []byte(red.String(string(data)))
}
