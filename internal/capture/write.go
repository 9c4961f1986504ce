package capture

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// File names a capture writes into its output directory.
const (
	JSONFile     = "capture.json"
	MarkdownFile = "capture.md"
)

// EncodeJSON renders c as indented JSON.
func EncodeJSON(c *Capture) ([]byte, error) {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding capture: %w", err)
	}
	return append(b, '\n'), nil
}

// DecodeJSON parses capture.json, refusing another schema version.
func DecodeJSON(b []byte) (*Capture, error) {
	var c Capture
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("decoding capture: %w", err)
	}
	if c.Schema != SchemaVersion {
		return nil, fmt.Errorf("capture schema %q: this sagebench reads %q", c.Schema, SchemaVersion)
	}
	return &c, nil
}

// WriteMarkdown renders the human summary of c: targets, windows, and
// one row per metric with its window statistics.
func WriteMarkdown(w io.Writer, c *Capture) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Capture %s\n\n", c.StartedAt.UTC().Format("2006-01-02 15:04:05Z"))
	fmt.Fprintf(&b, "%d windows of %gs, a scrape every %gs; schema %s.\n\n", len(c.Windows), c.WindowSeconds, c.IntervalSeconds, c.Schema)
	b.WriteString("| target | scrapes | failed | NaN/±Inf left out | first error |\n|---|---:|---:|---:|---|\n")
	for _, t := range c.Targets {
		first := ""
		if len(t.Errors) > 0 {
			first = t.Errors[0]
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s |\n", md(t.URL), t.Scrapes, t.Failed, t.NonFinite, md(first))
	}
	for _, win := range c.Windows {
		if len(win.Missing) > 0 {
			fmt.Fprintf(&b, "\nWindow %d is missing for %s.\n", win.Index, md(strings.Join(win.Missing, ", ")))
		}
	}
	writeMetricTable(&b, c)
	writeProcessTable(&b, c)
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", md(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeMetricTable(b *strings.Builder, c *Capture) {
	b.WriteString("\n## Metrics\n\nRates are per second (counters, histogram observations); gauges show window means.\n\n")
	b.WriteString("| metric | type | of | mean | median | min | max | p95 | p99 | total delta | windows p99 (histograms) |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, m := range c.Metrics {
		s := m.Stats
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			md(SeriesKey(m.Name, m.Labels)), m.Type, m.StatOf, g(s.Mean), g(s.Median), g(s.Min), g(s.Max),
			g(s.P95), g(s.P99), gp(m.TotalDelta), windowP99s(m))
	}
}

func windowP99s(m Metric) string {
	if m.Type != TypeHistogram {
		return ""
	}
	parts := make([]string, len(m.Windows))
	for i, w := range m.Windows {
		parts[i] = "–"
		if w.P99 != nil {
			parts[i] = g(*w.P99)
		}
	}
	return strings.Join(parts, " / ")
}

func writeProcessTable(b *strings.Builder, c *Capture) {
	if len(c.Processes) == 0 {
		return
	}
	b.WriteString("\n## Processes\n\n| pid | name | samples | CPU % mean | CPU % max | max RSS MiB | max open files |\n|---:|---|---:|---:|---:|---:|---:|\n")
	for _, p := range c.Processes {
		fmt.Fprintf(b, "| %d | %s | %d | %.1f | %.1f | %.1f | %d |\n", p.PID, md(p.Name), len(p.Samples),
			p.CPUPercent.Mean, p.CPUPercent.Max, float64(p.MaxRSS)/(1<<20), p.MaxOpen)
	}
}

func g(v float64) string { return fmt.Sprintf("%.4g", v) }

// gp is g of *v, "-" when absent (not representable).
func gp(v *float64) string {
	if v == nil {
		return "-"
	}
	return g(*v)
}

func md(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
