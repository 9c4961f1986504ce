package gate

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Sorted returns the findings, regressions first, then inconclusive ones,
// then passes, each group in evaluation order.
func (o *Outcome) Sorted() []Finding {
	fs := append([]Finding(nil), o.Findings...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Verdict > fs[j].Verdict })
	return fs
}

// WriteText writes one verdict line per finding, the comparison table and
// the final verdict line.
func (o *Outcome) WriteText(w io.Writer) error {
	for _, f := range o.Sorted() {
		fmt.Fprintln(w, f.String())
	}
	if o.Report != nil {
		fmt.Fprintln(w)
		if err := o.Report.Write(w, "text"); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\nverdict: %s\n", o.Verdict)
	return err
}

// WriteMarkdown writes the verdict, the findings and the comparison as
// Markdown (a PR comment or a report section).
func (o *Outcome) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "**Verdict: %s**\n\n", strings.ToUpper(o.Verdict.String()))
	fmt.Fprintln(w, "| verdict | rule | subject | detail |\n| --- | --- | --- | --- |")
	for _, f := range o.Sorted() {
		v := f.Verdict.String()
		if f.Note {
			v = "note"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", v, f.Rule, mdCell(f.Subject), mdCell(f.Detail))
	}
	fmt.Fprintln(w)
	if o.Report == nil {
		return nil
	}
	fmt.Fprintln(w, "### Comparison")
	fmt.Fprintln(w)
	return o.Report.Write(w, "markdown")
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteJSON writes the outcome as one JSON document.
func (o *Outcome) WriteJSON(w io.Writer) error {
	type finding struct {
		Verdict string `json:"verdict"`
		Finding
	}
	doc := struct {
		Verdict  string    `json:"verdict"`
		Findings []finding `json:"findings"`
		Report   any       `json:"comparison,omitempty"`
	}{Verdict: o.Verdict.String()}
	for _, f := range o.Sorted() {
		v := f.Verdict.String()
		if f.Note {
			v = "note" // decided nothing: never a pass
		}
		doc.Findings = append(doc.Findings, finding{v, f})
	}
	if o.Report != nil {
		doc.Report = o.Report
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}
