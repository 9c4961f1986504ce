package q4

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

func TestJudge(t *testing.T) {
	q := &q4{cfg: Default(true)} // TTFT 300ms, E2E 2s, success 0.99, lag 100ms
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
		{"ttft over", []record.Request{ok(100, 300, 1), ok(900, 1000, 2)}, false, false, "p90 TTFT"},
		{"e2e over", []record.Request{ok(100, 3000, 1)}, false, false, "p90 E2E"},
		{"errors", []record.Request{ok(100, 300, 1), {OK: false}}, false, false, "success"},
		{"driver lag wins", []record.Request{ok(900, 300, 500)}, false, true, "driver lag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := q.judge(4, "n1@4", tc.rs, time.Second, 1)
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
	if d := quick.MaxProbe * time.Duration(quick.MaxProbes*len(quick.Scales)); d > 55*time.Second {
		t.Errorf("quick may send %v of traffic, want ≤ 55 s (the run ≤ 60 s)", d)
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
	if y := string((&q4{cfg: quick}).StackYAML()); strings.Count(y, "kind: llm") != 1 || !strings.Contains(y, "slots: 1") {
		t.Errorf("stack YAML starts at the first scale:\n%s", y)
	}
}

// TestOutcomeEfficiency: efficiency is only bracketed, like the rates:
// a bound whose interval is what the brackets allow, open when a bracket
// is, not measurable against a driver-bound baseline; superlinear
// brackets carry their caveat.
func TestOutcomeEfficiency(t *testing.T) {
	q := &q4{cfg: Default(false)}
	var out = newOutcome()
	q.outcome(&out, []Frontier{{Engines: 1, MaxRate: 10, FailRate: 11, Bracketed: true, Precise: true}, {Engines: 2, MaxRate: 15, FailRate: 16.5, Bracketed: true, Precise: true},
		{Engines: 4, DriverBound: true, DriverRate: 40, MaxRate: 30}})
	e2, _ := out.Result.Metric("engines=2.efficiency")
	if e2.State != result.Bound || e2.Interval == nil || math.Abs(e2.Interval[0]-15.0/22) > 1e-9 || math.Abs(e2.Interval[1]-0.825) > 1e-9 {
		t.Errorf("efficiency at 2 = %+v, want a bound [0.682, 0.825]", e2)
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
	out = newOutcome()
	q.outcome(&out, []Frontier{{Engines: 1, MaxRate: 8, FailRate: 8.4, Bracketed: true, Precise: true}, {Engines: 2, MaxRate: 20, FailRate: 21, Bracketed: true, Precise: true}})
	if p := out.Result.Primary; p.State != result.Bound || !(p.Interval[0] > 1) || !strings.Contains(p.Reason, "superlinear") {
		t.Errorf("superlinear brackets: %+v, want the caveat", p)
	}
	out = newOutcome()
	q.outcome(&out, []Frontier{{Engines: 1, MaxRate: 8, FailRate: 8.4, Bracketed: true, Precise: true}})
	if p := out.Result.Primary; p.State != result.NotMeasurable || !strings.Contains(p.Reason, "one scale only") {
		t.Errorf("one scale: %+v", p)
	}
}

// TestProbeTableNumeric: probes are listed by scale and rate as numbers
// ("n1@4" before "n1@10"), each once.
func TestProbeTableNumeric(t *testing.T) {
	q := &q4{cfg: Default(true)}
	tbl := q.probeTable([]Frontier{{Engines: 1, Probes: []Probe{{Rate: 10}, {Rate: 4, Pass: true}, {Rate: 7, Pass: true}}}})
	var got []string
	for _, row := range tbl.Rows {
		got = append(got, row[1].Text)
	}
	if strings.Join(got, " ") != "4.00 7.00 10.00" {
		t.Errorf("probe rates in order %v", got)
	}
}

// TestProbeLength: a trial is long enough for a queue to build (20 ×
// the service time) and for its quantile (100 requests for the p99),
// within max_probe.
func TestProbeLength(t *testing.T) {
	q := &q4{cfg: Default(false)} // probe 10 s, max 2 min, p99, 20 ×, TTFT 1 s, 5 %
	s := &searcher{q: q}
	for _, tc := range []struct {
		name      string
		serviceMs float64
		rate      float64
		want      time.Duration
	}{
		{"an overload of 5 % shows: 1 s ÷ (0.99 × 0.05)", 0, 50, 20200 * time.Millisecond},
		{"20 × a 1.2 s service time", 1200, 50, 24 * time.Second},
		{"100 requests at 4 req/s", 100, 4, 25 * time.Second},
		{"capped", 100, 0.1, 2 * time.Minute},
	} {
		s.service = tc.serviceMs
		if got := s.length(tc.rate); got != tc.want {
			t.Errorf("%s: length %v, want %v", tc.name, got, tc.want)
		}
	}
	if minSamples(0.99) != 100 || minSamples(0.9) != 10 || minSamples(0.999) != 1000 {
		t.Errorf("minSamples: %d %d %d", minSamples(0.99), minSamples(0.9), minSamples(0.999))
	}
}

// TestJudgeFailuresAreSlow: failed requests count as +∞ in the judged
// quantile, so a probe whose failures exceed 1 − q fails on its tail,
// and a verdict within one standard error of the rank is uncertain.
func TestJudgeFailuresAreSlow(t *testing.T) {
	q := &q4{cfg: Default(true)} // p90, TTFT 300 ms, success ≥ 0.99
	q.cfg.SLO.TTFT = 500 * time.Millisecond
	q.cfg.SLO.MinSuccess = 0
	var rs []record.Request
	for i := range 100 {
		rs = append(rs, record.Request{OK: i%5 != 0, SLOMet: i%5 != 0, TTFTMs: 50, FirstToken: 1, E2EMs: 100})
	}
	p := q.judge(10, "n1@10", rs, time.Second, 1)
	if p.Pass || !strings.Contains(p.Reason, "∞") || !math.IsInf(p.TTFTQ, 1) {
		t.Errorf("20 %% failed, p90 judged: %+v, want a failure on the tail", p)
	}
	rs = rs[:0]
	for i := range 100 {
		rs = append(rs, record.Request{OK: true, SLOMet: true, TTFTMs: float64(400 + 2*i), FirstToken: 1, E2EMs: 900})
	}
	p = q.judge(10, "n1@10", rs, time.Second, 1) // p90 = 578 ms; ranks 87–93 hold 572–584 ms
	if p.Pass || p.Uncertain {
		t.Errorf("a clear failure: %+v", p)
	}
	q.cfg.SLO.TTFT = 580 * time.Millisecond
	if p = q.judge(10, "n1@10", rs, time.Second, 1); !p.Pass || !p.Uncertain {
		t.Errorf("a bound inside one standard error of the p90: %+v, want pass and uncertain", p)
	}
}

func newOutcome() workload.Outcome { return workload.Outcome{} }

// TestScaleCommand: q4.scale_command runs with {n} replaced, without a
// shell of its own; a failure is an error with the end of its output.
func TestScaleCommand(t *testing.T) {
	dir := t.TempDir()
	q := &q4{cfg: Default(true)}
	s := &searcher{q: q, ctx: context.Background(), env: &workload.Env{Log: io.Discard}}
	q.cfg.ScaleCommand = []string{"sh", "-c", "echo {n} > " + filepath.Join(dir, "n")}
	if n, err := s.resize(4); err != nil || n != 4 {
		t.Fatalf("resize: %d, %v", n, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "n")); strings.TrimSpace(string(b)) != "4" {
		t.Errorf("the command saw %q, want 4", b)
	}
	q.cfg.ScaleCommand = []string{"sh", "-c", "echo cannot scale to {n}; exit 3"}
	if _, err := s.resize(2); err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "cannot scale to 2") {
		t.Errorf("failing command: %v", err)
	}
	c := Default(false)
	c.ScaleCommand = []string{"kubectl", "scale"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "{n}") {
		t.Errorf("a scale command without {n}: %v", err)
	}
}
