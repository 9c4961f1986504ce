package drill

import (
	"cmp"
	"errors"
	"fmt"
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
	Restart  = "restart"  // start a killed process engine again
	Drop     = "drop"     // the stack drops the next count responses silently (tests the lost counter)
)

// Actions lists every action.
func Actions() []string {
	return []string{Kill, Pause, Resume, Slowdown, Drain, Add, Remove, Policy, Restart, Drop}
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
	Count    int           `yaml:"count,omitempty" json:"count,omitempty"`     // drop
}

// Target names what the event acts on.
func (e Event) Target() string {
	switch e.Action {
	case Policy:
		return e.Policy
	case Drop:
		return "gateway"
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
// metric back within Bound for Hold.
type Recovery struct {
	Metric string        `yaml:"metric" json:"metric"` // ttft_p99 | e2e_p99 | ttft_p50 | e2e_p50
	Bound  time.Duration `yaml:"bound" json:"bound"`
	Hold   time.Duration `yaml:"hold" json:"hold"`
}

// Config is a drill's schedule and measurement.
type Config struct {
	Events   []Event         `yaml:"events" json:"events"`
	Hooks    map[string]Hook `yaml:"hooks,omitempty" json:"hooks,omitempty"` // by action
	Series   series.Config   `yaml:"series" json:"series"`
	Recovery Recovery        `yaml:"recovery" json:"recovery"`
}

// DefaultConfig is the measurement every drill starts from: default
// windows, recovery when the p99 TTFT is back under 1 s for 2 s (1 s at
// the quick scale). The drill adds its events.
func DefaultConfig(quick bool) Config {
	c := Config{Series: series.Config{}.WithDefaults(), Recovery: Recovery{Metric: "ttft_p99", Bound: time.Second, Hold: 2 * time.Second}}
	if quick {
		c.Recovery.Hold = time.Second
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
	case e.Action != Policy && e.Action != Drop && e.Engine == "":
		return fmt.Errorf("%s: engine is required", e.Action)
	case e.Duration > 0 && e.Action != Pause && e.Action != Slowdown:
		return fmt.Errorf("%s: duration applies to pause and slowdown only", e.Action)
	}
	return nil
}

// Expand returns the events in time order with the undo of each timed
// pause (a resume) and slowdown (factor 1) added.
func Expand(events []Event) []Event {
	var out []Event
	for _, e := range events {
		if e.Duration > 0 {
			undo := Event{At: e.At + e.Duration, Action: Resume, Engine: e.Engine}
			if e.Action == Slowdown {
				undo = Event{At: e.At + e.Duration, Action: Slowdown, Engine: e.Engine, Factor: 1}
			}
			e.Duration = 0
			out = append(out, e, undo)
			continue
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	return out
}
