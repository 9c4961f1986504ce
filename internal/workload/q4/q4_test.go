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

// trials are n requests per trial over two trials ("a", "a#2") of TTFT
// ttft(i) and E2E e2e(i) ms, lag 1 ms, all successful.
func trials(n int, ttft, e2e func(i int) float64) []record.Request {
	var rs []record.Request
	for _, ph := range []string{"a", "a#2"} {
		for i := range n {
			rs = append(rs, record.Request{Phase: ph, OK: true, SLOMet: true, TTFTMs: ttft(i), FirstToken: 1, E2EMs: e2e(i), LagMs: 1})
		}
	}
	return rs
}

func TestJudge(t *testing.T) {
	q := &q4{cfg: Default(true)} // p75, TTFT 300ms, E2E 2s, success 0.99, lag 100ms
	c := func(v float64) func(int) float64 { return func(int) float64 { return v } }
	tests := []struct {
		name      string
		rs        []record.Request
		pass      bool
		undecided bool
		driver    bool
		reason    string
	}{
		{"within", trials(20, c(100), c(300)), true, false, false, ""},
		{"ttft over", trials(20, c(900), c(1000)), false, false, false, "p75 TTFT"},
		{"e2e over", trials(20, c(100), c(3000)), false, false, false, "p75 E2E"},
		{"one error in 41: undecided, not a failure (success CI 0.871–0.996 holds 0.99)", append(trials(20, c(100), c(300)), record.Request{Phase: "a", OK: false}), false, true, false, "undecided: success"},
		{"errors beyond doubt: a failure", append(trials(20, c(100), c(300)), record.Request{Phase: "a", OK: false}, record.Request{Phase: "a", OK: false}, record.Request{Phase: "a", OK: false}, record.Request{Phase: "a", OK: false}, record.Request{Phase: "a", OK: false}, record.Request{Phase: "a#2", OK: false}, record.Request{Phase: "a#2", OK: false}, record.Request{Phase: "a#2", OK: false}), false, false, false, "success 0.833 < 0.990"},
		{"no request arrived: undecided, no evidence", nil, false, true, false, "no request arrived"},
		{"driver lag wins", []record.Request{{Phase: "a", OK: true, TTFTMs: 900, FirstToken: 1, E2EMs: 300, LagMs: 500}}, false, false, true, "driver lag"},
		{"too few requests to pass: 2 × 4 all within", trials(4, c(100), c(300)), false, true, false, "undecided"},
		{"one trial decides nothing", trials(20, c(100), c(300))[:20], false, true, false, "1 trials"},
		{"the trials disagree: undecided", append(trials(20, c(100), c(300))[:20], trials(20, c(900), c(300))[20:]...), false, true, false, "undecided"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := q.judge(4, "n1@4", tc.rs, time.Second, 2)
			if p.Pass != tc.pass || p.Undecided != tc.undecided || p.DriverBound != tc.driver || !strings.Contains(p.Reason, tc.reason) {
				t.Errorf("judge = %+v; want pass %v undecided %v driver %v reason %q", p, tc.pass, tc.undecided, tc.driver, tc.reason)
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
	// A driver-bound rate(1) is ≥ 8: the efficiency is at most
	// 17 ÷ (2 · 8), from the brackets as they are.
	out = newOutcome()
	q.outcome(&out, []Frontier{{Engines: 1, MaxRate: 8, DriverBound: true, DriverRate: 12}, {Engines: 2, MaxRate: 16, FailRate: 17, Bracketed: true}})
	if p := out.Result.Primary; p.State != result.Bound || p.Interval[0] != 0 || math.Abs(p.Interval[1]-17.0/16) > 1e-9 {
		t.Errorf("efficiency against a driver-bound rate(1): %+v", p)
	}
	// The bug this fixes: a driver-bound larger scale with a failure
	// probed below the driver's limit still has the open bracket its rate
	// metric states, and the efficiency uses that, not the failure.
	out = newOutcome()
	q.outcome(&out, []Frontier{{Engines: 1, MaxRate: 4, FailRate: 4.2, Bracketed: true, Precise: true}, {Engines: 2, MaxRate: 8.07, FailRate: 16, Bracketed: true, DriverBound: true, DriverRate: 12}})
	r2, _ := out.Result.Metric("engines=2.max_rate")
	if p := out.Result.Primary; !math.IsInf(r2.Interval[1], 1) || !math.IsInf(p.Interval[1], 1) {
		t.Errorf("rate %+v, efficiency %+v: want both open above", r2, p)
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
		{"381 requests over 2 trials at 4 req/s", 100, 4, 47630 * time.Millisecond},
		{"capped", 100, 0.1, 2 * time.Minute},
	} {
		s.service = tc.serviceMs
		if got := s.length(tc.rate); got != tc.want {
			t.Errorf("%s: length %v, want %v", tc.name, got, tc.want)
		}
	}
	if minSamples(0.99) != 381 || minSamples(0.9) != 35 || minSamples(0.75) != 12 {
		t.Errorf("minSamples: %d %d %d", minSamples(0.99), minSamples(0.9), minSamples(0.999))
	}
}

// TestJudgeFailuresAreSlow: failed requests count as +∞ (they never
// meet a latency bound), so a probe whose failures exceed 1 − q fails
// on its tail; a share near q is undecided, not a pass.
func TestJudgeFailuresAreSlow(t *testing.T) {
	q := &q4{cfg: Default(true)}
	q.cfg.SLO = SLO{Quantile: 0.9, TTFT: 500 * time.Millisecond, E2E: 2 * time.Second}
	rs := trials(100, func(int) float64 { return 50 }, func(int) float64 { return 100 })
	for i := range rs {
		rs[i].OK = i%5 != 0
	}
	p := q.judge(10, "n1@10", rs, time.Second, 2)
	if p.Pass || p.Undecided || !strings.Contains(p.Reason, "∞") || !math.IsInf(p.TTFTQ, 1) {
		t.Errorf("20 %% failed, p90 judged: %+v, want a failure on the tail", p)
	}
	rs = trials(100, func(i int) float64 { return float64(400 + 2*i) }, func(int) float64 { return 900 })
	if p = q.judge(10, "n1@10", rs, time.Second, 2); p.Pass || p.Undecided {
		t.Errorf("51 %% within 500 ms: a clear failure: %+v", p)
	}
	q.cfg.SLO.TTFT = 580 * time.Millisecond // 91 % within: q = 0.9 inside the interval
	if p = q.judge(10, "n1@10", rs, time.Second, 2); p.Pass || !p.Undecided || !p.Uncertain {
		t.Errorf("91 %% within, q 90 %%: %+v, want undecided", p)
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
