package q8

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestQuickHasEveryFault: the quick schedule has one fault of each kind
// (an engine's kill with its restart, pause, slowdown, a connection cut,
// the gateway's kill with its restart), all inside the load.
func TestQuickHasEveryFault(t *testing.T) {
	c := Default(true)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range drill.Expand(c.Events()) {
		got = append(got, e.Action)
	}
	if s := strings.Join(got, ","); s != "kill,restart,pause,resume,slowdown,slowdown,cut,kill,restart" {
		t.Fatalf("quick events %s", s)
	}
	if c.Load.Span() > 30*time.Second {
		t.Errorf("quick span %v > 30s", c.Load.Span())
	}
}

// TestFullCyclesFaults: ten minutes hold ten faults (two of each kind:
// engine kill, pause, slowdown, cut, gateway kill), and --duration
// lengthens the cycle with the soak.
func TestFullCyclesFaults(t *testing.T) {
	c := Default(false)
	count := func() map[string]int {
		m := map[string]int{}
		for _, e := range c.Events() {
			m[e.Action]++
		}
		return m
	}
	if m := count(); m[drill.Kill] != 4 || m[drill.Pause] != 2 || m[drill.Slowdown] != 2 || m[drill.Restart] != 4 || m[drill.Cut] != 2 {
		t.Fatalf("10 min: %v", m)
	}
	d := time.Hour
	c.Override(workload.Overrides{Duration: &d})
	if m := count(); m[drill.Kill] < 23 {
		t.Fatalf("1 h: %v", m)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"default", func(*Config) {}, ""},
		{"no fault engine", func(c *Config) { c.Faults.Engine = "" }, "q8.faults"},
		{"load too short", func(c *Config) { c.Load.Schedule.Duration = 3 * time.Second }, "no fault fits"},
		{"bad rate", func(c *Config) { c.Load.Schedule.Rate = -1 }, "q8.load"},
		{"unknown fault", func(c *Config) { c.Faults.Cycle = []string{"flood"} }, "q8.faults.cycle[0]"},
		{"explicit events win", func(c *Config) {
			c.Faults = Faults{}
			c.Drill.Events = []drill.Event{{At: time.Second, Action: drill.Kill, Engine: "llm-0"}}
		}, ""},
		{"event after the load", func(c *Config) {
			c.Drill.Events = []drill.Event{{At: time.Minute, Action: drill.Kill, Engine: "llm-0"}}
		}, "q8.drill.events[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Default(true)
			tc.edit(c)
			err := c.Validate()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v; want %q", err, tc.want)
			}
		})
	}
}

// TestQuickSteadyLeadIn: Q8 quick's first fault comes after one window
// of warm-up and at least four windows of steady state, and the dry run
// says so.
func TestQuickSteadyLeadIn(t *testing.T) {
	c := Default(true)
	d := c.Drill
	d.Events = c.Events()
	lead, need, ok := d.LeadIn()
	w := d.Series.WithDefaults().Width
	if !ok || int((lead-w)/w) < 4 {
		t.Fatalf("first fault at %v with windows of %v: %d steady windows (need %v of lead-in)", lead, w, int((lead-w)/w), need)
	}
	p, err := (&q8{cfg: c}).Plan(1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "steady state: the windows from 1s to the first event at 5s, 4 of 1s") {
		t.Errorf("plan notes %q", p.Notes)
	}
	if len(d.Events) != 7 { // kill+restart, pause, slowdown, cut, gateway kill+restart
		t.Errorf("events %d: want one fault of each kind", len(d.Events))
	}
}
