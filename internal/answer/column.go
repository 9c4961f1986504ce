package answer

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/sagebench/sagebench/internal/result"
)

// Column is one run, or one configuration pooled over repetitions.
type Column struct {
	Label     string
	Result    *result.Result // nil: the run has no result (it never finished)
	RunConfig json.RawMessage
	// Windows and Events are a drill's windowed series and events
	// (windows.jsonl, events.jsonl); empty for the other Qs.
	Windows []Window
	Events  []Event
	// EndS is the run's length in seconds (the end of open fault spans).
	EndS float64
}

// Window is one window of a drill's series. Its p99s count a failed
// request as +∞ (series.Window): +Inf when failures reach the rank (the
// figure draws a failed marker there), nil without samples.
type Window struct {
	StartS, EndS float64
	Throughput   float64
	TTFTP99      *float64
	E2EP99       *float64
}

// Event is one drill event: what was done, when (nil: not performed),
// and what followed (its recovery, when the result has it).
type Event struct {
	Seq            int
	Action, Target string
	AtS            *float64
	EndS           *float64 // a fault with a duration: when it ended (its recovery counts from there)
	Outcome        string
	Recovery       *result.Metric
}

// Label is "kill llm-fast-0".
func (e Event) Label() string {
	if e.Target == "" {
		return e.Action
	}
	return e.Action + " " + e.Target
}

// ResultEvents are the events of r with their recovery metrics.
func ResultEvents(r *result.Result) []Event {
	if r == nil {
		return nil
	}
	var out []Event
	for _, e := range r.Events {
		ev := Event{Seq: e.Seq, Action: e.Action, Target: e.Target, AtS: e.AtS, EndS: e.EndS, Outcome: e.Outcome}
		for _, m := range e.Metrics {
			if m.Name == "recovery_ms" || m.Name == "recovery_s" {
				mm := m
				ev.Recovery = &mm
			}
		}
		out = append(out, ev)
	}
	return out
}

// lookup walks a run_config document: each step is a key, or
// "name=VALUE" to pick the element of a list whose name is VALUE.
func lookup(raw json.RawMessage, path ...string) (any, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	for _, step := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[step]; !ok {
				return nil, false
			}
		case []any:
			k, want, ok := strings.Cut(step, "=")
			if !ok {
				return nil, false
			}
			v = nil
			for _, el := range x {
				if m, ok := el.(map[string]any); ok && m[k] == want {
					v = m
				}
			}
			if v == nil {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return v, true
}

// Scale is "quick" or "full", from run_config.quick.
func Scale(raw json.RawMessage) string {
	if v, ok := lookup(raw, "quick"); ok && v == true {
		return "quick"
	}
	return "full"
}

func itoa(i int) string { return strconv.Itoa(i) }
