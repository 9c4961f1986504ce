package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// EventsFile is where a drill records its events in the run directory.
const EventsFile = "events.jsonl"

// maxEvents bounds the events drawn per run.
const maxEvents = 200

// Event is what the report reads of one drill event (a line of
// events.jsonl): what was done to what, and when, in ns since the run's
// start (ActualNS 0: not performed).
type Event struct {
	Action     string `json:"action"`
	Target     string `json:"target"`
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
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return // not a drill
	}
	if err != nil {
		r.problem("%s: %v", EventsFile, err)
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			r.problem("%s:%d: not a drill event (want action, target, actual_ns)", filepath.Base(path), n)
			continue
		}
		if len(r.Events) < maxEvents {
			r.Events = append(r.Events, e)
		}
	}
	if err := sc.Err(); err != nil {
		r.problem("%s: %v", EventsFile, err)
	}
}

// markEvents draws each performed event as a dashed vertical line across
// the plot's y range, labelled with what it did.
func markEvents(p *plot.Plot, events []Event, ymax float64) error {
	if ymax <= 0 || len(events) == 0 {
		return nil
	}
	var labels plotter.XYLabels
	for _, e := range events {
		if e.ActualNS <= 0 {
			continue
		}
		x := float64(e.ActualNS) / 1e9
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax}})
		if err != nil {
			return fmt.Errorf("event %s: %w", e.Label(), err)
		}
		l.Color, l.Dashes, l.Width = eventColor, []vg.Length{vg.Points(4), vg.Points(3)}, vg.Points(1)
		p.Add(l)
		labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: ymax})
		labels.Labels = append(labels.Labels, " "+e.Label())
	}
	if len(labels.XYs) == 0 {
		return nil
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return fmt.Errorf("event labels: %w", err)
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Color = eventColor
	}
	p.Add(lb)
	return nil
}

// maxY is the largest finite Y of the points.
func maxY(sets ...plotter.XYs) float64 {
	m := 0.0
	for _, s := range sets {
		for _, p := range s {
			if p.Y > m && !isNaNOrInf(p.Y) {
				m = p.Y
			}
		}
	}
	return m
}
