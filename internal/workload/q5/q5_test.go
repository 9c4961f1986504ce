package q5

import (
	"math"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/stack"
)

// TestKilledShareIsAboutAQuarter: the default kill takes ~25-30 % of the
// pool's capacity, at both scales.
func TestKilledShareIsAboutAQuarter(t *testing.T) {
	for _, quick := range []bool{true, false} {
		q := &q5{cfg: Default(quick)}
		d, err := q.capacity()
		if err != nil {
			t.Fatal(err)
		}
		if d.KilledShare < 0.2 || d.KilledShare > 0.35 {
			t.Errorf("quick=%v: killed share %.3f", quick, d.KilledShare)
		}
		if f, s := d.Capacity["llm-fast-0"], d.Capacity["llm-slow-0"]; !(f > 2*s) || math.IsNaN(f) {
			t.Errorf("quick=%v: fast %.1f vs slow %.1f req/s", quick, f, s)
		}
	}
}

// TestStackYAML: the pool's stack parses, every engine a process.
func TestStackYAML(t *testing.T) {
	q := &q5{cfg: Default(true)}
	cfg, err := stack.ParseConfig(q.StackYAML())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Engines) != 6 {
		t.Fatalf("engines %+v", cfg.Engines)
	}
	for _, e := range cfg.Engines {
		if !e.Process {
			t.Errorf("engine %s is not a process", e.ID)
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
