package capture

import "time"

// SchemaVersion names the layout of capture.json; it changes whenever a
// field changes meaning or goes away (adding a field keeps it).
const SchemaVersion = "sagebench.capture/v1"

// Capture is the content of capture.json.
type Capture struct {
	Schema          string       `json:"schema"`
	StartedAt       time.Time    `json:"started_at"`
	EndedAt         time.Time    `json:"ended_at"`
	WindowSeconds   float64      `json:"window_seconds"`
	IntervalSeconds float64      `json:"interval_seconds"`
	Windows         []WindowInfo `json:"windows"`
	Targets         []TargetInfo `json:"targets"`
	Metrics         []Metric     `json:"metrics"`
	Processes       []Process    `json:"processes,omitempty"`
	Notes           []string     `json:"notes,omitempty"`
}

// WindowInfo is one capture window; Missing lists the targets with fewer
// than two good scrapes in it (no values for them).
type WindowInfo struct {
	Index   int       `json:"index"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Missing []string  `json:"missing,omitempty"`
}

// TargetInfo counts one target's scrapes; Errors holds the first few.
// NonFinite counts the series values left out because they were NaN or
// ±Inf (an idle summary's quantiles, histogram_quantile over no
// observations, a division by zero): JSON cannot hold them and no
// window statistic can use them.
type TargetInfo struct {
	URL       string   `json:"url"`
	Scrapes   int      `json:"scrapes"`
	Failed    int      `json:"failed"`
	NonFinite int      `json:"non_finite,omitempty"`
	Errors    []string `json:"errors,omitempty"`
}

// Metric is one series of one target across the windows. Stats
// summarises the window rates (counters, histograms, summaries: StatOf
// "rate", per second) or the window means (gauges: StatOf "mean").
type Metric struct {
	Target  string            `json:"target"`
	Name    string            `json:"name"`
	Labels  map[string]string `json:"labels,omitempty"`
	Type    string            `json:"type"`
	Windows []MetricWindow    `json:"windows"`
	StatOf  string            `json:"stat_of"`
	Stats   Stats             `json:"stats"`
	// TotalDelta is the sum of the windows' deltas; absent when it is
	// beyond a float64 (a broken or hostile exporter's values near
	// 1e308: JSON cannot hold +Inf, and the capture would be lost).
	TotalDelta *float64 `json:"total_delta,omitempty"`
}

// MetricWindow is a series over one window. Start and End are the values
// at the first and last good scrape (the sample count for histograms and
// summaries); Delta is the increase with counter resets handled (End −
// Start for gauges); Rate is Delta per second. Quantiles are estimated
// from the bucket increases in the window (histograms with observations).
type MetricWindow struct {
	Index   int      `json:"index"`
	Missing bool     `json:"missing,omitempty"`
	Seconds float64  `json:"seconds,omitempty"`
	Start   float64  `json:"start"`
	End     float64  `json:"end"`
	Delta   float64  `json:"delta"`
	Resets  int      `json:"resets,omitempty"`
	Rate    *float64 `json:"rate,omitempty"`
	Mean    *float64 `json:"mean,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	SumRate *float64 `json:"sum_rate,omitempty"`
	P50     *float64 `json:"p50,omitempty"`
	P95     *float64 `json:"p95,omitempty"`
	P99     *float64 `json:"p99,omitempty"`
}
