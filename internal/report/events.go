package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/sagebench/sagebench/internal/answer"
)

// Files a drill writes into the run directory.
const (
	EventsFile  = "events.jsonl"
	WindowsFile = "windows.jsonl"
)

// Bounds on what is read of a drill's files.
const (
	maxEvents  = 200
	maxWindows = 200_000
)

// Event is what the report reads of one drill event (a line of
// events.jsonl): what was done to what, and when, in ns since the run's
// start (ActualNS 0: not performed). Unknown fields are ignored (a drill
// may add some).
type Event struct {
	Seq        int    `json:"seq"`
	Action     string `json:"action"`
	Target     string `json:"target"`
	Detail     string `json:"detail"`
	IntendedNS int64  `json:"intended_ns"`
	ActualNS   int64  `json:"actual_ns"`
	Outcome    string `json:"outcome"`
}

// Label is "kill llm-fast-0".
func (e Event) Label() string {
	if e.Target == "" {
		return e.Action
	}
	return e.Action + " " + e.Target
}

func (r *Run) loadEvents(path string) {
	n := 0
	r.readLines(path, EventsFile, func(line []byte) bool {
		var e Event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			return false
		}
		if n++; len(r.Events) < maxEvents {
			r.Events = append(r.Events, e)
		}
		return true
	})
}

// windowLine is a line of windows.jsonl (percentiles null without
// samples).
type windowLine struct {
	StartNS    int64    `json:"start_ns"`
	EndNS      int64    `json:"end_ns"`
	Throughput float64  `json:"throughput"`
	TTFTP99    *float64 `json:"ttft_p99_ms"`
	E2EP99     *float64 `json:"e2e_p99_ms"`
	P99Failed  bool     `json:"p99_failed"`
}

func (r *Run) loadWindows(path string) {
	r.readLines(path, WindowsFile, func(line []byte) bool {
		var w windowLine
		if json.Unmarshal(line, &w) != nil || w.EndNS < w.StartNS {
			return false
		}
		if len(r.Windows) < maxWindows {
			r.Windows = append(r.Windows, answer.Window{StartS: float64(w.StartNS) / 1e9, EndS: float64(w.EndNS) / 1e9,
				Throughput: w.Throughput, TTFTP99: w.TTFTP99, E2EP99: w.E2EP99, P99Failed: w.P99Failed})
		}
		return true
	})
}

// readLines calls each on every line of path (absent: nothing); a line
// each refuses, or a read error, is a problem of the run.
func (r *Run) readLines(path, name string, each func([]byte) bool) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		r.problem("%s: %v", name, err)
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if !each(sc.Bytes()) {
			r.problem("%s:%d: not a line of %s", filepath.Base(path), n, name)
		}
	}
	if err := sc.Err(); err != nil {
		r.problem("%s: %v", name, err)
	}
}

// Column is the run as the answer figures see it: its result, config,
// windows and events.
func (r *Run) Column(label string) answer.Column {
	return answer.Column{Label: label, Result: r.Record.Result, RunConfig: r.Record.RunConfig, Windows: r.Windows, EndS: r.endS(),
		Events: slices.Clone(r.events)}
}

// answerEvents are the run's events as the answer draws them: the
// result's, else those of events.jsonl.
func (r *Run) answerEvents() []answer.Event {
	if evs := answer.ResultEvents(r.Record.Result); len(evs) > 0 {
		return evs
	}
	var evs []answer.Event
	for _, e := range r.Events {
		ev := answer.Event{Seq: e.Seq, Action: e.Action, Target: e.Target, Outcome: e.Outcome}
		if e.ActualNS > 0 {
			at := float64(e.ActualNS) / 1e9
			ev.AtS = &at
		}
		evs = append(evs, ev)
	}
	return evs
}

// endS is the run's length: its recorded duration, else the last
// completion.
func (r *Run) endS() float64 {
	if d := r.Record.EndedAt.Sub(r.Record.StartedAt).Seconds(); d > 0 && !r.Record.StartedAt.IsZero() {
		return d
	}
	end := 0.0
	for _, s := range r.Samples {
		end = max(end, s.EndS)
	}
	return end
}
