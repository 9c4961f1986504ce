package q3

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestJain(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"equal shares", []float64{0.5, 0.5}, 1},
		{"one takes all of two", []float64{1, 0}, 0.5},
		{"one takes all of four", []float64{0, 0, 3, 0}, 0.25},
		{"none", nil, 1},
		{"all zero", []float64{0, 0}, 1},
		{"uneven", []float64{1, 0.5}, 2.25 / 2.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Jain(tc.xs); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Jain(%v) = %v, want %v", tc.xs, got, tc.want)
			}
		})
	}
}

func TestQ3Config(t *testing.T) {
	quick := Default(true)
	for _, c := range []*Config{Default(false), quick} {
		if err := c.Validate(); err != nil {
			t.Fatalf("defaults: %v", err)
		}
	}
	if d := (quick.Alone + quick.Contended) * time.Duration(len(quick.Policies)); d > 30*time.Second {
		t.Errorf("quick sends %v of traffic, want ≤ 30 s", d)
	}
	cases := map[string]func(c *Config){
		"q3.victim.tenant":     func(c *Config) { c.Aggressor.Tenant = c.Victim.Tenant },
		"q3.victim.rate":       func(c *Config) { c.Victim.Rate = 0 },
		"q3.aggressor.rate":    func(c *Config) { c.Aggressor.RampTo = -1 },
		"q3.alone":             func(c *Config) { c.Alone = 0 },
		"q3.policies: unknown": func(c *Config) { c.Policies = []string{"lottery"} },
		"q3.stack":             func(c *Config) { c.Stack.Profile = "" },
	}
	for want, mutate := range cases {
		c := Default(true)
		mutate(c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v", want, err)
		}
	}
	q := &q3{cfg: quick}
	p, err := q.Plan(7)
	if err != nil || len(p.Phases) != 4 || p.Phases[1].Name != "fifo.contended" || p.Phases[1].Requests <= p.Phases[0].Requests {
		t.Fatalf("plan %+v, %v", p, err)
	}
	if y := string(q.StackYAML()); !strings.Contains(y, `"aggressor": {max_concurrent: 12}`) || !strings.Contains(y, "slots: 4") {
		t.Errorf("stack YAML:\n%s", y)
	}
}
