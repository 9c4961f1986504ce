package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/sagebench/sagebench/internal/answer"
	"github.com/sagebench/sagebench/internal/series"
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

// windowLine is what the report reads of a line of windows.jsonl. Its
// p99s count a failed request as +∞: a number of ms, "+Inf" when
// failures reach the rank, null without samples (series.Ms). A file
// written before the plain names counted failures held the successes'
// figure there and said p99_failed when failures reached the rank: such
// a window reads as +∞ too.
type windowLine struct {
	StartNS    int64     `json:"start_ns"`
	EndNS      int64     `json:"end_ns"`
	Throughput float64   `json:"throughput"`
	TTFTP99    series.Ms `json:"ttft_p99_ms"`
	E2EP99     series.Ms `json:"e2e_p99_ms"`
	P99Failed  bool      `json:"p99_failed"` // older files only
}

func (r *Run) loadWindows(path string) {
	r.readLines(path, WindowsFile, func(line []byte) bool {
		w := windowLine{TTFTP99: series.Ms(math.NaN()), E2EP99: series.Ms(math.NaN())}
		if json.Unmarshal(line, &w) != nil || w.EndNS < w.StartNS {
			return false
		}
		if w.P99Failed {
			w.TTFTP99, w.E2EP99 = series.Ms(math.Inf(1)), series.Ms(math.Inf(1))
		}
		if len(r.Windows) < maxWindows {
			r.Windows = append(r.Windows, answer.Window{StartS: float64(w.StartNS) / 1e9, EndS: float64(w.EndNS) / 1e9,
				Throughput: w.Throughput, TTFTP99: msPtr(w.TTFTP99), E2EP99: msPtr(w.E2EP99)})
		}
		return true
	})
}

// msPtr is m as the answer's figures take it: nil without samples.
func msPtr(m series.Ms) *float64 {
	if math.IsNaN(float64(m)) {
		return nil
	}
	v := float64(m)
	return &v
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
