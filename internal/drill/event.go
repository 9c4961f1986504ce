package drill

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/sagebench/sagebench/internal/record"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/series"
)

// Actions of an event.
const (
	Kill     = "kill"     // SIGKILL the engine's process (embedded: in-process engines close)
	Pause    = "pause"    // SIGSTOP (a hang); with duration, a resume follows
	Resume   = "resume"   // SIGCONT
	Slowdown = "slowdown" // factor× slower; with duration, factor 1 follows
	Drain    = "drain"    // admin API: stop new work, wait for running work
	Add      = "add"      // admin API: add an engine (profile, kind)
	Remove   = "remove"   // admin API: remove an engine
	Policy   = "policy"   // admin API: switch the scheduling policy
	Restart  = "restart"  // start a killed process engine (or the gateway) again
	Drop     = "drop"     // the stack drops the next count responses silently (tests the lost counter)
	Cut      = "cut"      // drop every established connection to the target (streams in flight are cut)
)

// Gateway is the engine name that makes kill, restart, pause, resume and
// slowdown act on the gateway's process (embedded stack with topology:
// split, or a hook).
const Gateway = "gateway"

// Actions lists every action.
func Actions() []string {
	return []string{Kill, Pause, Resume, Slowdown, Drain, Add, Remove, Policy, Restart, Drop, Cut}
}

// Event is one scheduled action.
type Event struct {
	At       time.Duration `yaml:"at" json:"at"` // offset from the start of the load
	Action   string        `yaml:"action" json:"action"`
	Engine   string        `yaml:"engine,omitempty" json:"engine,omitempty"`
	Factor   float64       `yaml:"factor,omitempty" json:"factor,omitempty"`     // slowdown
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"` // pause, slowdown: undone after this long
	Policy   string        `yaml:"policy,omitempty" json:"policy,omitempty"`
	Profile  string        `yaml:"profile,omitempty" json:"profile,omitempty"` // add
	Kind     string        `yaml:"kind,omitempty" json:"kind,omitempty"`       // add: llm | embedding
	Slots    int           `yaml:"slots,omitempty" json:"slots,omitempty"`     // add: the engine's concurrency (0: its profile's)
	Count    int           `yaml:"count,omitempty" json:"count,omitempty"`     // drop

	undoOf int // Expand: 1 + the index (in Expand's result) of the fault this event undoes; 0 = none
}

// UndoOf returns the index, in Expand's result, of the fault this event
// undoes (the resume of a timed pause, the factor-1 end of a timed
// slowdown), or false.
func (e Event) UndoOf() (int, bool) { return e.undoOf - 1, e.undoOf > 0 }

// Repair reports whether e puts right an earlier fault rather than
// causing one: a restart, a resume, a slowdown to factor ≤ 1.
func (e Event) Repair() bool {
	return e.Action == Restart || e.Action == Resume || (e.Action == Slowdown && e.Factor <= 1)
}

// Target names what the event acts on.
func (e Event) Target() string {
	switch e.Action {
	case Policy:
		return e.Policy
	case Drop:
		return Gateway
	case Cut:
		return "connections"
	}
	return e.Engine
}

// Detail is the event's parameters in one short string.
func (e Event) Detail() string {
	switch e.Action {
	case Slowdown:
		return fmt.Sprintf("factor %g", e.Factor)
	case Add:
		return e.Kind + " " + e.Profile
	case Drop:
		return fmt.Sprintf("count %d", e.Count)
	}
	return ""
}

func (e Event) String() string {
	s := e.Action + " " + e.Target()
	if d := e.Detail(); d != "" {
		s += " (" + d + ")"
	}
	return fmt.Sprintf("%s at %v", s, e.At)
}

// Hook performs an action on an external target: a command with its
// arguments, or an HTTP call. {engine}, {policy}, {factor}, {profile},
// {kind} and {count} in arguments, URL and body are replaced by the
// event's values.
type Hook struct {
	Exec []string  `yaml:"exec,omitempty" json:"exec,omitempty"`
	HTTP *HTTPHook `yaml:"http,omitempty" json:"http,omitempty"`
	// Timeout bounds the hook (default 10s).
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// HTTPHook is an HTTP call; a 2xx answer means done.
type HTTPHook struct {
	Method string `yaml:"method" json:"method"`
	URL    string `yaml:"url" json:"url"`
	Body   string `yaml:"body,omitempty" json:"body,omitempty"`
}

// Recovery is the rule an event's recovery is measured by: the windowed
// metric back within Bound (and no failed request) for Hold, which must
// be at least one window width (0: one width).
type Recovery struct {
	Metric string        `yaml:"metric" json:"metric"` // ttft_p99 | e2e_p99 | ttft_p50 | e2e_p50
	Bound  time.Duration `yaml:"bound" json:"bound"`
	Hold   time.Duration `yaml:"hold" json:"hold"`
}

// Rule is r as the series package reads it, the hold raised to width.
func (r Recovery) Rule(width time.Duration) series.Rule {
	return series.Rule{Metric: r.Metric, BoundMs: record.Millis(r.Bound), Hold: max(r.Hold, width)}
}

// Config is a drill's schedule and measurement.
type Config struct {
	Events   []Event         `yaml:"events" json:"events"`
	Hooks    map[string]Hook `yaml:"hooks,omitempty" json:"hooks,omitempty"` // by action
	Series   series.Config   `yaml:"series" json:"series"`
	Recovery Recovery        `yaml:"recovery" json:"recovery"`
}

// DefaultConfig is the measurement every drill starts from: windows of
// 2 s every 250 ms (1 s at the quick scale), recovery when the p99 TTFT
// is back under 1 s for one window width. The drill adds its events.
func DefaultConfig(quick bool) Config {
	c := Config{Series: series.Config{}.WithDefaults(), Recovery: Recovery{Metric: "ttft_p99", Bound: time.Second, Hold: 2 * time.Second}}
	if quick {
		c.Series.Width, c.Recovery.Hold = time.Second, time.Second
	}
	return c
}

// Validate reports the first problem, naming the key under prefix (e.g.
// q8.drill); span is the load's duration (0: unknown), which every event
// must fall inside.
func (c *Config) Validate(prefix string, span time.Duration) error {
	for i, e := range c.Events {
		if err := e.validate(); err != nil {
			return fmt.Errorf("%s.events[%d]: %w", prefix, i, err)
		}
		if span > 0 && e.At+e.Duration >= span {
			return fmt.Errorf("%s.events[%d]: %s ends at %v, after the load (%v); move it earlier or lengthen the load",
				prefix, i, e.Action, e.At+e.Duration, span)
		}
	}
	for action, h := range c.Hooks {
		if !slices.Contains(Actions(), action) {
			return fmt.Errorf("%s.hooks.%s: unknown action; use %s", prefix, action, strings.Join(Actions(), ", "))
		}
		if (len(h.Exec) > 0) == (h.HTTP != nil) {
			return fmt.Errorf("%s.hooks.%s: set exactly one of exec and http", prefix, action)
		}
		if h.HTTP != nil && (h.HTTP.Method == "" || !strings.HasPrefix(h.HTTP.URL, "http")) {
			return fmt.Errorf("%s.hooks.%s.http: method and an http(s) url are required", prefix, action)
		}
		if h.Timeout < 0 {
			return fmt.Errorf("%s.hooks.%s.timeout must be ≥ 0", prefix, action)
		}
	}
	if err := c.Series.Validate(prefix + ".series"); err != nil {
		return err
	}
	if _, ok := series.MetricByName(c.Recovery.Metric); !ok {
		return fmt.Errorf("%s.recovery.metric %q: use ttft_p99, e2e_p99, ttft_p50 or e2e_p50", prefix, c.Recovery.Metric)
	}
	if c.Recovery.Bound <= 0 || c.Recovery.Hold < 0 {
		return fmt.Errorf("%s.recovery: bound must be > 0 and hold ≥ 0", prefix)
	}
	if w := c.Series.WithDefaults().Width; c.Recovery.Hold > 0 && c.Recovery.Hold < w {
		return fmt.Errorf("%s.recovery.hold %v: must be at least the window width (%s.series.width %v), or a single window could read as recovered; raise it or narrow the windows",
			prefix, c.Recovery.Hold, prefix, w)
	}
	return nil
}

func (e Event) validate() error {
	switch {
	case !slices.Contains(Actions(), e.Action):
		return fmt.Errorf("action %q: use %s", e.Action, strings.Join(Actions(), ", "))
	case e.At < 0 || e.Duration < 0:
		return errors.New("at and duration must be ≥ 0")
	case e.Action == Policy && e.Policy == "":
		return errors.New("policy: name the policy to switch to")
	case e.Action == Slowdown && (e.Factor <= 0 || math.IsInf(e.Factor, 0) || math.IsNaN(e.Factor)):
		return errors.New("slowdown: factor must be a number > 0")
	case e.Action == Add && (e.Profile == "" || e.Kind == ""):
		return errors.New("add: profile and kind are required")
	case e.Action == Drop && e.Count < 1:
		return errors.New("drop: count must be ≥ 1")
	case e.Action != Policy && e.Action != Drop && e.Action != Cut && e.Engine == "":
		return fmt.Errorf("%s: engine is required (an engine id, or %q for the gateway's process)", e.Action, Gateway)
	case e.Engine == Gateway && !slices.Contains([]string{Kill, Restart, Pause, Resume, Slowdown}, e.Action):
		return fmt.Errorf("%s: the gateway takes kill, restart, pause, resume and slowdown", e.Action)
	case e.Slots < 0 || (e.Slots > 0 && e.Action != Add):
		return errors.New("slots: applies to add only, and must be ≥ 0")
	case e.Duration > 0 && e.Action != Pause && e.Action != Slowdown:
		return fmt.Errorf("%s: duration applies to pause and slowdown only", e.Action)
	}
	return nil
}

// Expand returns the events in time order with the undo of each timed
// pause (a resume) and slowdown (factor 1) added; UndoOf links an undo —
// added, or a listed repair such as the restart after a kill — to its
// fault.
func Expand(events []Event) []Event {
	type item struct {
		e        Event
		id, undo int // undo: the id of the fault it undoes
	}
	var items []item
	for i, e := range events {
		e.undoOf = 0
		if e.Duration > 0 {
			undo := Event{At: e.At + e.Duration, Action: Resume, Engine: e.Engine}
			if e.Action == Slowdown {
				undo = Event{At: e.At + e.Duration, Action: Slowdown, Engine: e.Engine, Factor: 1}
			}
			e.Duration = 0
			items = append(items, item{e: e, id: i + 1}, item{e: undo, undo: i + 1})
			continue
		}
		items = append(items, item{e: e, id: i + 1})
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.e.At, b.e.At) })
	at := map[int]int{}
	for k, it := range items {
		if it.id > 0 {
			at[it.id] = k
		}
	}
	out := make([]Event, len(items))
	for k, it := range items {
		out[k] = it.e
		if it.undo > 0 {
			out[k].undoOf = at[it.undo] + 1
		}
	}
	linkRepairs(out)
	return out
}

// linkRepairs makes each listed repair — a restart, a resume, a slowdown
// to factor ≤ 1 — the undo of the latest fault it repairs on the same
// engine (a kill, a pause, a slowdown) not undone yet: a kill followed by
// a restart is a fault that lasts until the restart.
func linkRepairs(evs []Event) {
	undone := map[int]bool{}
	for k := range evs {
		if j, ok := evs[k].UndoOf(); ok {
			undone[j] = true
		}
	}
	for k, e := range evs {
		if !e.Repair() || e.undoOf > 0 {
			continue
		}
		for j := k - 1; j >= 0; j-- {
			if !undone[j] && evs[j].Engine == e.Engine && repairs(e, evs[j]) {
				evs[k].undoOf, undone[j] = j+1, true
				break
			}
		}
	}
}

// repairs reports whether repair r puts right fault f (same engine).
func repairs(r, f Event) bool {
	switch r.Action {
	case Restart:
		return f.Action == Kill
	case Resume:
		return f.Action == Pause
	}
	return f.Action == Slowdown && f.Factor > 1
}
