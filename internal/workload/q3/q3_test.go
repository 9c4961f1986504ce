package q3

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
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
		{"none", nil, math.NaN()},
		{"all zero", []float64{0, 0}, math.NaN()},
		{"uneven", []float64{1, 0.5}, 2.25 / 2.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Jain(tc.xs); math.Abs(got-tc.want) > 1e-12 || math.IsNaN(got) != math.IsNaN(tc.want) {
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

// TestStarvedVictimIsNotIsolated: when every contended victim request
// fails, the victim has no contended p99 and the interference ratio is
// not measurable — never 0 or any number that reads as isolation — and
// the answer says so.
func TestStarvedVictimIsNotIsolated(t *testing.T) {
	q := &q3{cfg: Default(true)}
	var rs []record.Request
	add := func(phase, tenant string, i int, ok bool) {
		r := record.Request{ID: fmt.Sprintf("%s-%s-%d", phase, tenant, i), Phase: phase, Tenant: tenant, Type: "llm", OK: ok, Status: 200, SentNS: 1}
		if ok {
			r.FirstToken, r.TTFTMs, r.E2EMs, r.SLOMet = 2, 15, 40, true
		} else {
			r.Status, r.ErrorClass = 503, "http_5xx"
		}
		rs = append(rs, r)
	}
	for i := range 20 {
		add("fair_share.alone", "victim", i, true)
		add("fair_share.contended", "victim", i, false)
		add("fair_share.contended", "aggressor", i, true)
	}
	out := q.outcome(workload.Outcome{Phases: []summary.Phase{{Name: "fair_share.alone", End: time.Second}, {Name: "fair_share.contended", End: 2 * time.Second}}},
		[]string{"fair_share"}, rs)
	p := out.Result.Primary
	if p.State != result.NotMeasurable || !strings.Contains(p.Reason, "every contended victim request failed (20 of 20)") {
		t.Errorf("primary %+v: want not measurable, naming the 20 failed victim requests", p)
	}
	if !strings.Contains(out.Result.Answer, "not measurable") {
		t.Errorf("answer %q", out.Result.Answer)
	}
	if err := out.Result.Check(); err != nil {
		t.Error(err)
	}
}
