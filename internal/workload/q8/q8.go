// Package q8 is Q8 RecoverySoak: long steady mixed load while one engine
// of the reference stack suffers periodic faults of each kind — SIGKILL
// with a restart, SIGSTOP for a set time then SIGCONT (a hang), and a
// slowdown — run by the drill timeline (internal/drill). Primary: lost
// requests (must be 0); availability, recovery per fault, p99 drift over
// the soak and the RSS and open-file drift of the stack's processes.
package q8

import (
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// Spec is Q8's catalog entry.
func Spec() workload.Spec {
	return workload.Spec{
		ID: "Q8", Name: "RecoverySoak", Entry: "recovery",
		Description: "long mixed load with periodic SIGKILL+restart, SIGSTOP (hang) and slowdown of an engine process; primary: lost requests (must be 0), availability, recovery per fault, p99 drift",
		New:         func(quick bool) workload.Workload { return &q8{cfg: Default(quick)} },
		Primary:     drill.DefLost,
	}
}

// Config configures Q8 (config section q8).
type Config struct {
	// Base is the load, the timeline and the targets; the default target
	// is lost ≤ 0.
	drill.Base `yaml:",inline" json:",inline"`
	// Faults generates the periodic fault schedule when drill.events is empty.
	Faults Faults `yaml:"faults" json:"faults"`
	// Engines are the engine ids whose processes are sampled for RSS and
	// open files (embedded stack only).
	Engines []string `yaml:"engines" json:"engines"`
}

// Faults is a periodic schedule cycling kill (+restart), pause, slowdown.
type Faults struct {
	Engine         string        `yaml:"engine" json:"engine"`
	First          time.Duration `yaml:"first" json:"first"` // first fault's offset
	Every          time.Duration `yaml:"every" json:"every"` // between faults
	RestartAfter   time.Duration `yaml:"restart_after" json:"restart_after"`
	Pause          time.Duration `yaml:"pause" json:"pause"`
	SlowdownFactor float64       `yaml:"slowdown_factor" json:"slowdown_factor"`
	SlowdownFor    time.Duration `yaml:"slowdown_for" json:"slowdown_for"`
}

// Default: full scale 10 minutes at 20 req/s, a fault every 60 s from
// 30 s; quick 27 s at 8 req/s, a fault every 7 s from 4 s (one of each).
func Default(quick bool) *Config {
	c := &Config{
		Base:    drill.Base{Load: drill.DefaultLoad(20, 10*time.Minute), Drill: drill.DefaultConfig(quick)},
		Faults:  Faults{Engine: "llm-1", First: 30 * time.Second, Every: time.Minute, RestartAfter: 3 * time.Second, Pause: 5 * time.Second, SlowdownFactor: 4, SlowdownFor: 10 * time.Second},
		Engines: []string{"llm-0", "llm-1", "embed-0"},
	}
	c.Target = result.Targets{drill.DefLost.Name: 0}
	if quick {
		c.Load = drill.QuickLoad(8, 27*time.Second)
		c.Faults = Faults{Engine: "llm-1", First: 4 * time.Second, Every: 7 * time.Second, RestartAfter: 2 * time.Second, Pause: 3 * time.Second, SlowdownFactor: 4, SlowdownFor: 4 * time.Second}
	}
	return c
}

// Events returns the drill's events: drill.events when given, else the
// periodic schedule over the load's span.
func (c *Config) Events() []drill.Event {
	if len(c.Drill.Events) > 0 {
		return c.Drill.Events
	}
	f, span := c.Faults, c.Load.Span()
	var out []drill.Event
	for i, at := 0, f.First; ; i, at = i+1, at+f.Every {
		var ev []drill.Event
		switch i % 3 {
		case 0:
			ev = []drill.Event{{At: at, Action: drill.Kill, Engine: f.Engine}, {At: at + f.RestartAfter, Action: drill.Restart, Engine: f.Engine}}
		case 1:
			ev = []drill.Event{{At: at, Action: drill.Pause, Engine: f.Engine, Duration: f.Pause}}
		default:
			ev = []drill.Event{{At: at, Action: drill.Slowdown, Engine: f.Engine, Factor: f.SlowdownFactor, Duration: f.SlowdownFor}}
		}
		last := ev[len(ev)-1]
		if f.Every <= 0 || span <= 0 || last.At+last.Duration >= span-c.Drill.Recovery.Hold {
			return out
		}
		out = append(out, ev...)
	}
}

// Validate reports the first problem, naming the q8 key.
func (c *Config) Validate() error {
	f := c.Faults
	if len(c.Drill.Events) == 0 && (f.Engine == "" || f.Every <= 0 || f.First < 0 || f.RestartAfter < 0 || f.Pause <= 0 || f.SlowdownFactor <= 0 || f.SlowdownFor <= 0) {
		return fmt.Errorf("q8.faults: engine, every > 0, pause > 0, slowdown_factor > 0 and slowdown_for > 0 are required (or list q8.drill.events)")
	}
	if err := c.Load.Validate("q8.load"); err != nil {
		return err
	}
	events := c.Events()
	if len(events) == 0 {
		return fmt.Errorf("q8: no fault fits in the load's %v; lengthen q8.load or move q8.faults.first earlier", c.Load.Span())
	}
	return c.Base.Validate("q8", events, defs)
}

// StackYAML is Q8's reference stack: two H100 LLM engines and a CPU
// embedder, each its own process; fast health probes so ejection and
// re-admission show within a second.
func (q *q8) StackYAML() []byte {
	return []byte(`policy: fifo
engines:
  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100, process: true}
  - {id: llm-1, kind: llm, profile: llama3.1-8b-h100, process: true}
  - {id: embed-0, kind: embedding, profile: bge-small-cpu, process: true}
index: {size: 0}
health: {interval: 250ms, eject_after: 2}
limits: {stall_timeout: 5s}
`)
}
