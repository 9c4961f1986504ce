package q4

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

func TestJudge(t *testing.T) {
	q := &q4{cfg: Default(true)} // TTFT 500ms, E2E 2s, success 0.99, lag 100ms
	ok := func(ttft, e2e, lag float64) record.Request {
		return record.Request{OK: true, SLOMet: true, TTFTMs: ttft, FirstToken: 1, E2EMs: e2e, LagMs: lag}
	}
	tests := []struct {
		name   string
		rs     []record.Request
		pass   bool
		driver bool
		reason string
	}{
		{"within", []record.Request{ok(100, 300, 1), ok(200, 400, 2)}, true, false, ""},
		{"ttft over", []record.Request{ok(100, 300, 1), ok(900, 1000, 2)}, false, false, "p99 TTFT"},
		{"e2e over", []record.Request{ok(100, 3000, 1)}, false, false, "p99 E2E"},
		{"errors", []record.Request{ok(100, 300, 1), {OK: false}}, false, false, "success"},
		{"driver lag wins", []record.Request{ok(900, 300, 500)}, false, true, "driver lag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := q.judge(4, "n1@4", tc.rs, time.Second)
			if p.Pass != tc.pass || p.DriverBound != tc.driver || !strings.Contains(p.Reason, tc.reason) {
				t.Errorf("judge = %+v; want pass %v driver %v reason %q", p, tc.pass, tc.driver, tc.reason)
			}
		})
	}
}

func TestQ4Config(t *testing.T) {
	quick := Default(true)
	for _, c := range []*Config{Default(false), quick} {
		if err := c.Validate(); err != nil {
			t.Fatalf("defaults: %v", err)
		}
	}
	if d := quick.Probe * time.Duration(quick.MaxProbes*len(quick.Scales)); d > 30*time.Second {
		t.Errorf("quick may send %v of traffic, want ≤ 30 s", d)
	}
	cases := map[string]func(c *Config){
		"q4.scales is empty": func(c *Config) { c.Scales = nil },
		"q4.scales: 0":       func(c *Config) { c.Scales = []int{0} },
		"q4.growth":          func(c *Config) { c.Growth = 1 },
		"q4.precision":       func(c *Config) { c.Precision = 0 },
		"q4.max_probes":      func(c *Config) { c.MaxProbes = 1 },
		"q4.slo.min_success": func(c *Config) { c.SLO.MinSuccess = 2 },
	}
	for want, mutate := range cases {
		c := Default(true)
		mutate(c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v", want, err)
		}
	}
	if y := string((&q4{cfg: quick}).StackYAML()); strings.Count(y, "kind: llm") != 1 || !strings.Contains(y, "slots: 2") {
		t.Errorf("stack YAML starts at the first scale:\n%s", y)
	}
}

func TestOutcomeEfficiency(t *testing.T) {
	q := &q4{cfg: Default(false)}
	var out = newOutcome()
	q.outcome(&out, []Frontier{{Engines: 1, MaxRate: 10, Bracketed: true}, {Engines: 2, MaxRate: 15, Bracketed: true},
		{Engines: 4, DriverBound: true, DriverRate: 40, MaxRate: 30}})
	if got := out.Extra["engines=2.efficiency"]; got != 0.75 {
		t.Errorf("efficiency at 2 = %v, want 0.75", got)
	}
	if _, ok := out.Extra["engines=4.efficiency"]; ok {
		t.Error("a driver-bound scale must have no efficiency")
	}
	if out.Extra["primary"] != 0.75 || !strings.Contains(out.Sections[0].Body, "driver-bound at 40.00") {
		t.Errorf("primary %v; table:\n%s", out.Extra["primary"], out.Sections[0].Body)
	}
	out = newOutcome()
	q.outcome(&out, []Frontier{{Engines: 1, MaxRate: 8, DriverBound: true, DriverRate: 12}, {Engines: 2, MaxRate: 16, Bracketed: true}})
	if _, ok := out.Extra["primary"]; ok {
		t.Errorf("efficiency against a driver-bound rate(1): %v", out.Extra)
	}
}

func newOutcome() workload.Outcome { return workload.Outcome{} }
