// Package q8 is Q8 RecoverySoak: long steady mixed load, sized to a share
// of the capacity the drill measures first, while the reference stack
// suffers periodic faults along its whole path — an engine SIGKILLed and
// restarted, SIGSTOPped for a set time then SIGCONTed (a hang), slowed
// down; every client connection cut at the proxy in front of the
// gateway; the gateway's own process SIGKILLed and restarted — run by the
// drill timeline (internal/drill). The embedded stack runs split (every
// part its own process) so that the gateway and the path to it can fail.
// Primary: lost requests (must be 0), by class; availability, recovery
// per fault, p99 drift over the soak and the RSS and open-file drift of
// the stack's processes.
package q8

import (
	"fmt"
	"slices"
	"strings"
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
		Figure:      workload.Figure{Recipe: workload.FigureTimeline},
		Files:       append(slices.Clone(drill.FileNames), fileProcess),
	}
}

// Config configures Q8 (config section q8).
type Config struct {
	// Base is the load, the timeline and the targets; the default target
	// is lost ≤ 0.
	drill.Base `yaml:",inline" json:",inline"`
	// Faults generates the periodic fault schedule when drill.events is empty.
	Faults Faults `yaml:"faults" json:"faults"`
	// Engines are the engine ids (and "gateway") whose processes are
	// sampled for RSS and open files (embedded stack only).
	Engines []string `yaml:"engines" json:"engines"`
}

// The kinds of fault the periodic schedule cycles through.
const (
	FaultKill     = "kill"     // SIGKILL the engine, restart it after restart_after
	FaultPause    = "pause"    // SIGSTOP it for pause, then SIGCONT
	FaultSlowdown = "slowdown" // slow it down ×slowdown_factor for slowdown_for
	FaultCut      = "cut"      // drop every client connection (streams in flight are cut)
	FaultGateway  = "gateway"  // SIGKILL the gateway's process, restart it after restart_after
)

// Faults is a periodic schedule cycling through Cycle.
type Faults struct {
	Engine         string        `yaml:"engine" json:"engine"`
	First          time.Duration `yaml:"first" json:"first"` // first fault's offset
	Every          time.Duration `yaml:"every" json:"every"` // between faults
	RestartAfter   time.Duration `yaml:"restart_after" json:"restart_after"`
	Pause          time.Duration `yaml:"pause" json:"pause"`
	SlowdownFactor float64       `yaml:"slowdown_factor" json:"slowdown_factor"`
	SlowdownFor    time.Duration `yaml:"slowdown_for" json:"slowdown_for"`
	// Cycle is the order of the faults (kill, pause, slowdown, cut,
	// gateway), repeated from First every Every.
	Cycle []string `yaml:"cycle" json:"cycle"`
}

// engineSlots caps each LLM engine's running batch: a pool whose capacity
// the harness can saturate on a laptop (see docs/q8.md).
const engineSlots = 4

// Default: full scale 10 minutes at 0.7 of the measured capacity, a
// fault every 60 s from 30 s (two of each kind); quick 29 s, a fault
// every 5 s from 5 s (one of each; the first 5 s are one window of
// warm-up and the four windows of the steady state).
func Default(quick bool) *Config {
	cycle := []string{FaultKill, FaultPause, FaultSlowdown, FaultCut, FaultGateway}
	c := &Config{
		Base: drill.Base{Load: drill.SizedLoad(10 * time.Minute), Drill: drill.DefaultConfig(quick)},
		Faults: Faults{Engine: "llm-1", First: 30 * time.Second, Every: time.Minute, RestartAfter: 3 * time.Second, Pause: 5 * time.Second,
			SlowdownFactor: 4, SlowdownFor: 10 * time.Second, Cycle: cycle},
		Engines: []string{"llm-0", "llm-1", "embed-0", drill.Gateway},
	}
	c.Target = result.Targets{drill.DefLost.Name: 0}
	if quick {
		c.Load = drill.QuickSizedLoad(29 * time.Second)
		c.Faults = Faults{Engine: "llm-1", First: 5 * time.Second, Every: 5 * time.Second, RestartAfter: 2 * time.Second, Pause: 2 * time.Second,
			SlowdownFactor: 4, SlowdownFor: 3 * time.Second, Cycle: cycle}
	}
	return c
}

// Events returns the drill's events: drill.events when given, else the
// periodic schedule over the load's span (a fault that would end within
// the last recovery hold of the load is left out).
func (c *Config) Events() []drill.Event {
	if len(c.Drill.Events) > 0 {
		return c.Drill.Events
	}
	f, span := c.Faults, c.Load.Span()
	var out []drill.Event
	for i, at := 0, f.First; len(f.Cycle) > 0; i, at = i+1, at+f.Every {
		ev := f.fault(f.Cycle[i%len(f.Cycle)], at)
		last := ev[len(ev)-1]
		if f.Every <= 0 || span <= 0 || last.At+last.Duration >= span-c.Drill.Recovery.Hold {
			return out
		}
		out = append(out, ev...)
	}
	return out
}

// fault is the events of one fault of kind at at.
func (f Faults) fault(kind string, at time.Duration) []drill.Event {
	switch kind {
	case FaultKill, FaultGateway:
		id := f.Engine
		if kind == FaultGateway {
			id = drill.Gateway
		}
		return []drill.Event{{At: at, Action: drill.Kill, Engine: id}, {At: at + f.RestartAfter, Action: drill.Restart, Engine: id}}
	case FaultPause:
		return []drill.Event{{At: at, Action: drill.Pause, Engine: f.Engine, Duration: f.Pause}}
	case FaultCut:
		return []drill.Event{{At: at, Action: drill.Cut}}
	}
	return []drill.Event{{At: at, Action: drill.Slowdown, Engine: f.Engine, Factor: f.SlowdownFactor, Duration: f.SlowdownFor}}
}

// StackOnlyKeys are the keys that configure the embedded stack only.
func (c *Config) StackOnlyKeys() []string { return []string{"q8.engines"} }

// Validate reports the first problem, naming the q8 key.
func (c *Config) Validate() error {
	f := c.Faults
	if len(c.Drill.Events) == 0 && (f.Engine == "" || f.Every <= 0 || f.First < 0 || f.RestartAfter < 0 || f.Pause <= 0 || f.SlowdownFactor <= 0 || f.SlowdownFor <= 0) {
		return fmt.Errorf("q8.faults: engine, every > 0, pause > 0, slowdown_factor > 0 and slowdown_for > 0 are required (or list q8.drill.events)")
	}
	kinds := []string{FaultKill, FaultPause, FaultSlowdown, FaultCut, FaultGateway}
	for i, k := range f.Cycle {
		if !slices.Contains(kinds, k) {
			return fmt.Errorf("q8.faults.cycle[%d] %q: use %s", i, k, strings.Join(kinds, ", "))
		}
	}
	if len(c.Drill.Events) == 0 && len(f.Cycle) == 0 {
		return fmt.Errorf("q8.faults.cycle: name at least one fault (%s), or list q8.drill.events", strings.Join(kinds, ", "))
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

// StackYAML is Q8's reference stack, split: two H100 LLM engines (running
// at most engineSlots requests each) and a CPU embedder, each its own
// process, the gateway its own process too, behind the harness's proxy;
// fast health probes so ejection and re-admission show within a second.
func (q *q8) StackYAML() []byte {
	return fmt.Appendf(nil, `topology: split
policy: fifo
engines:
  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100, process: true, slots: %[1]d}
  - {id: llm-1, kind: llm, profile: llama3.1-8b-h100, process: true, slots: %[1]d}
  - {id: embed-0, kind: embedding, profile: bge-small-cpu, process: true}
index: {size: 0}
health: {interval: 250ms, eject_after: 2}
limits: {stall_timeout: 5s}
`, engineSlots)
}
