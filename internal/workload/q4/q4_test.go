package q4

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
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

// TestOutcomeEfficiency: efficiency comes from the rate brackets, with
// the interval they allow; an open bracket leaves only a bound, and a
// driver-bound rate(1) leaves it not measurable.
func TestOutcomeEfficiency(t *testing.T) {
	q := &q4{cfg: Default(false)}
	var out = newOutcome()
	q.outcome(&out, []Frontier{{Engines: 1, MaxRate: 10, FailRate: 11, Bracketed: true}, {Engines: 2, MaxRate: 15, FailRate: 16.5, Bracketed: true},
		{Engines: 4, DriverBound: true, DriverRate: 40, MaxRate: 30}})
	e2, _ := out.Result.Metric("engines=2.efficiency")
	if !e2.Measured() || math.Abs(e2.Value-0.75) > 1e-9 || e2.Interval == nil || math.Abs(e2.Interval[0]-15.0/22) > 1e-9 || math.Abs(e2.Interval[1]-0.825) > 1e-9 {
		t.Errorf("efficiency at 2 = %+v, want 0.75 in [0.682, 0.825]", e2)
	}
	e4, _ := out.Result.Metric("engines=4.efficiency")
	if e4.State != result.Bound || !math.IsInf(e4.Interval[1], 1) {
		t.Errorf("a driver-bound scale's efficiency %+v: want a bound open above", e4)
	}
	if p := out.Result.Primary; p.Name != "scaling_efficiency" || p.State != result.Bound {
		t.Errorf("primary %+v", p)
	}
	if err := out.Result.Check(); err != nil {
		t.Error(err)
	}
	var tbl strings.Builder
	for _, row := range out.Result.Tables[0].Rows {
		tbl.WriteString(row[len(row)-1].Text + "\n")
	}
	if !strings.Contains(tbl.String(), "driver-bound at 40.00") {
		t.Errorf("frontier verdicts:\n%s", tbl.String())
	}
	out = newOutcome()
	q.outcome(&out, []Frontier{{Engines: 1, MaxRate: 8, DriverBound: true, DriverRate: 12}, {Engines: 2, MaxRate: 16, FailRate: 17, Bracketed: true}})
	if p := out.Result.Primary; p.State != result.NotMeasurable {
		t.Errorf("efficiency against a driver-bound rate(1): %+v", p)
	}
}

func newOutcome() workload.Outcome { return workload.Outcome{} }
