package q5

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/stack"
)

// TestStackYAML: the pool's stack parses, every engine a process.
func TestStackYAML(t *testing.T) {
	q := &q5{cfg: Default(true)}
	cfg, err := stack.ParseConfig(q.StackYAML())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Engines) != 4 {
		t.Fatalf("engines %+v", cfg.Engines)
	}
	for _, e := range cfg.Engines {
		if !e.Process {
			t.Errorf("engine %s is not a process", e.ID)
		}
		if e.Kind == "llm" && e.Slots == 0 {
			t.Errorf("engine %s runs its profile's whole batch: the pool's capacity is not capped", e.ID)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"default", func(*Config) {}, ""},
		{"no fast engine", func(c *Config) {
			for i := range c.Pool {
				c.Pool[i].Fast = false
			}
		}, "fast: true"},
		{"pool entry without profile", func(c *Config) { c.Pool[0].Profile = "" }, "q5.pool[0]"},
		{"target on no metric", func(c *Config) { c.Target["recovery"] = 10 }, "q5.target.recovery: no such metric"},
		{"target outside its domain", func(c *Config) { c.Target["urgent_fast_share"] = 2 }, "q5.target.urgent_fast_share: 2 is outside"},
		{"kill after the load", func(c *Config) { c.Drill.Events[0].At *= 10 }, "q5.drill.events[0]"},
		{"no kill", func(c *Config) { c.Drill.Events = c.Drill.Events[1:] }, "list one"},
		{"rate and utilisation", func(c *Config) { c.Load.Schedule.Rate = 10 }, "not both"},
		{"hold below the window", func(c *Config) { c.Drill.Recovery.Hold = 100 * time.Millisecond }, "q5.drill.recovery.hold"},
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
