package result

import (
	"errors"
	"fmt"
)

// Result is a Q's answer for one repetition (run.json "result").
type Result struct {
	// Answer is one sentence that answers the Q's question from the
	// metrics below, with its uncertainty, or says why it cannot.
	Answer string `json:"answer"`
	// Primary is the Q's primary metric (also among Metrics).
	Primary Metric `json:"primary"`
	// Metrics are every metric of the result, the primary first.
	Metrics []Metric `json:"metrics"`
	// Events are a drill's events, each with its own metrics.
	Events []Event `json:"events,omitempty"`
	// Targets are the verdicts on the targets the run was held to.
	Targets []Verdict `json:"targets,omitempty"`
	// Tables back the answer (per policy, per scale, per event …).
	Tables []Table `json:"tables,omitempty"`
}

// Event is one drill event and what followed it.
type Event struct {
	Seq    int    `json:"seq"`
	Action string `json:"action"`
	Target string `json:"target"`
	// AtS is when the event was performed, in seconds since the run's
	// start; nil when it was not.
	AtS *float64 `json:"at_s"`
	// EndS is when a fault with a duration ended (a kill's restart, a
	// pause's resume, a slowdown's end), in seconds since the run's
	// start: its recovery counts from there. Nil for an instantaneous
	// event.
	EndS *float64 `json:"end_s,omitempty"`
	// Outcome is ok, failed, not_performed or timed_out.
	Outcome string   `json:"outcome"`
	Metrics []Metric `json:"metrics"`
}

// Table is a titled table of text and metric cells.
type Table struct {
	// Key names the table for programs (the report's and the paper's
	// figures): a constant exported by the Q that builds it, stable
	// whatever the Title says. Empty in records written before keys.
	Key     string   `json:"key,omitempty"`
	Title   string   `json:"title"`
	Note    string   `json:"note,omitempty"`
	Columns []string `json:"columns"`
	Rows    [][]Cell `json:"rows"`
}

// Cell is a table cell: text, or a metric.
type Cell struct {
	Text   string  `json:"text,omitempty"`
	Metric *Metric `json:"metric,omitempty"`
}

// Text is a text cell.
func Text(s string) Cell { return Cell{Text: s} }

// Textf is a formatted text cell.
func Textf(format string, a ...any) Cell { return Cell{Text: fmt.Sprintf(format, a...)} }

// Of is a metric cell.
func Of(m Metric) Cell { return Cell{Metric: &m} }

// Table returns r's table whose key is key.
func (r Result) Table(key string) (Table, bool) {
	for _, t := range r.Tables {
		if key != "" && t.Key == key {
			return t, true
		}
	}
	return Table{}, false
}

// AddRow appends a row of cells.
func (t *Table) AddRow(cells ...Cell) { t.Rows = append(t.Rows, cells) }

// Metric returns the metric called name.
func (r Result) Metric(name string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Lookup returns the metric called name among the metrics, then the
// metric cells of the tables (a Q's per-stage or per-scale figures).
func (r Result) Lookup(name string) (Metric, bool) {
	if m, ok := r.Metric(name); ok {
		return m, true
	}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			for _, c := range row {
				if c.Metric != nil && c.Metric.Name == name {
					return *c.Metric, true
				}
			}
		}
	}
	return Metric{}, false
}

// New returns a result whose primary metric is primary and whose metrics
// are primary followed by others.
func New(answer string, primary Metric, others ...Metric) Result {
	return Result{Answer: answer, Primary: primary, Metrics: append([]Metric{primary}, others...)}
}

// Check reports every way r breaks the model: no answer, a primary not
// among the metrics, a metric name used twice, any metric (of the result,
// its events or its tables) that fails Metric.Check.
func (r Result) Check() error {
	var errs []error
	if r.Answer == "" {
		errs = append(errs, errors.New("result without an answer"))
	}
	if _, ok := r.Metric(r.Primary.Name); !ok || r.Primary.Name == "" {
		errs = append(errs, fmt.Errorf("primary metric %q is not among the metrics", r.Primary.Name))
	}
	seen := map[string]bool{}
	for _, m := range r.Metrics {
		if seen[m.Name] {
			errs = append(errs, fmt.Errorf("metric %s appears twice", m.Name))
		}
		seen[m.Name] = true
		errs = append(errs, m.Check())
	}
	errs = append(errs, r.Primary.Check())
	for _, e := range r.Events {
		for _, m := range e.Metrics {
			if err := m.Check(); err != nil {
				errs = append(errs, fmt.Errorf("event %d: %w", e.Seq, err))
			}
		}
	}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			for _, c := range row {
				if c.Metric != nil {
					if err := c.Metric.Check(); err != nil {
						errs = append(errs, fmt.Errorf("table %q: %w", t.Title, err))
					}
				}
			}
		}
	}
	return errors.Join(errs...)
}

// Missed reports whether a target of r was missed (its interval on the
// wrong side, or not verifiable).
func (r Result) Missed() bool {
	for _, v := range r.Targets {
		if v.Outcome == Missed || v.Outcome == "" && !v.Met {
			return true
		}
	}
	return false
}

// Inconclusive reports whether a target of r was neither met nor missed:
// its interval straddles the bound.
func (r Result) Inconclusive() bool {
	for _, v := range r.Targets {
		if v.Outcome == Inconclusive {
			return true
		}
	}
	return false
}
