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
		{"equal shares that round above one", []float64{0.7, 0.7, 0.7, 0.7, 0.7}, 1},
		{"one takes all of two", []float64{1, 0}, 0.5},
		{"one takes all of four", []float64{0, 0, 3, 0}, 0.25},
		{"none", nil, math.NaN()},
		{"all zero", []float64{0, 0}, math.NaN()},
		{"uneven", []float64{1, 0.5}, 2.25 / 2.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Jain(tc.xs); math.Abs(got-tc.want) > 1e-12 || got > 1 || math.IsNaN(got) != math.IsNaN(tc.want) {
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
// the headline, its SLO attainment, is 0 % against 100 % alone.
func TestStarvedVictimIsNotIsolated(t *testing.T) {
	q := &q3{cfg: Default(true)}
	out := q.outcome(phases("fair_share"), []string{"fair_share"}, victimRecords(20, func(i int) bool { return false }))
	p := out.Result.Primary
	if p.Name != "victim_slo_attainment" || !p.Measured() || p.Value != 0 {
		t.Errorf("primary %+v: want the victim's attainment, 0", p)
	}
	r, _ := out.Result.Metric("interference_ratio")
	if r.State != result.NotMeasurable || !strings.Contains(r.Reason, "every request of 20 failed") {
		t.Errorf("ratio %+v: want not measurable, naming the 20 failed victim requests", r)
	}
	if !strings.Contains(out.Result.Answer, "of 20 requests beside the aggressor against 100.0 % of 20 alone; the ratio of its p99 TTFTs is not measurable") {
		t.Errorf("answer %q", out.Result.Answer)
	}
	if err := out.Result.Check(); err != nil {
		t.Error(err)
	}
}

// TestHalfFailedVictimIsNotFast: with half the contended victim requests
// failing, the survivors' p99 is fast, but the p99 over every request
// is +∞ (never answered): no finite "fast" p99 and no ratio.
func TestHalfFailedVictimIsNotFast(t *testing.T) {
	q := &q3{cfg: Default(true)}
	out := q.outcome(phases("fair_share"), []string{"fair_share"}, victimRecords(40, func(i int) bool { return i%2 == 0 }))
	c, _ := out.Result.Metric("fair_share.victim_ttft_p99_contended_ms")
	r, _ := out.Result.Metric("interference_ratio")
	if c.State != result.Never || r.Measured() || r.State == result.Bound && !math.IsInf(r.Interval[1], 1) {
		t.Errorf("contended p99 %+v, ratio %+v: want +∞ and no finite ratio", c, r)
	}
	if p := out.Result.Primary; p.Value != 0.5 || p.Interval == nil || !(p.Interval[0] < 0.5 && p.Interval[1] > 0.5) {
		t.Errorf("primary %+v: want 50 %% with its interval", p)
	}
}

// victimRecords are 20 successful victim requests alone, n contended
// (ok(i) says which succeed) beside n successful aggressor requests.
func victimRecords(n int, ok func(int) bool) []record.Request {
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
	}
	for i := range n {
		add("fair_share.contended", "victim", i, ok(i))
		add("fair_share.contended", "aggressor", i, true)
	}
	return rs
}

func phases(pol string) workload.Outcome {
	return workload.Outcome{Phases: []summary.Phase{{Name: pol + ".alone", End: time.Second}, {Name: pol + ".contended", Start: time.Second, End: 3 * time.Second}}}
}

func TestMaxMin(t *testing.T) {
	for _, tc := range []struct {
		name     string
		capacity float64
		demands  []float64
		want     []float64
	}{
		{"equal split", 10, []float64{8, 8}, []float64{5, 5}},
		{"a small demand is met, the rest to the other", 10, []float64{2, 20}, []float64{2, 8}},
		{"capacity above every demand", 30, []float64{2, 20}, []float64{2, 20}},
		{"a tenant that sent nothing gets nothing", 10, []float64{0, 20}, []float64{0, 10}},
		{"no capacity", 0, []float64{3, 3}, []float64{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MaxMin(tc.capacity, tc.demands)
			for i := range tc.want {
				if math.Abs(got[i]-tc.want[i]) > 1e-9 {
					t.Fatalf("MaxMin(%v, %v) = %v, want %v", tc.capacity, tc.demands, got, tc.want)
				}
			}
		})
	}
}

// TestJainOverFairShares: the index compares each tenant's goodput with
// its fair share, so a quota that holds an aggressor to its share leaves
// it at 1, a starved victim lowers it, and no goodput at all is not
// measurable (never 1).
func TestJainOverFairShares(t *testing.T) {
	q := &q3{cfg: Default(true)}
	mk := func(victimMet, aggMet, aggSent int) []record.Request {
		var rs []record.Request
		for i := range 10 {
			rs = append(rs, record.Request{Tenant: "victim", OK: true, SLOMet: i < victimMet})
		}
		for i := range aggSent {
			rs = append(rs, record.Request{Tenant: "aggressor", OK: i < aggMet, SLOMet: i < aggMet})
		}
		return rs
	}
	for _, tc := range []struct {
		name string
		rs   []record.Request
		want float64 // NaN: not measurable
	}{
		{"victim whole, aggressor held by its quota to the rest", mk(10, 20, 60), 1},
		{"victim starved", mk(1, 29, 60), 0.569}, // x = 1/10, 29/20
		{"nothing done", mk(0, 0, 60), math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := jainMetric(q.fairShares(tc.rs, 1))
			if math.IsNaN(tc.want) {
				if m.State != result.NotMeasurable {
					t.Errorf("%+v, want not measurable", m)
				}
				return
			}
			if !m.Measured() || math.Abs(m.Value-tc.want) > 1e-3 {
				t.Errorf("Jain %+v, want %.3f", m, tc.want)
			}
		})
	}
}
