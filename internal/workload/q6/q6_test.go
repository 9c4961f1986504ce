package q6

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/summary"
)

func TestInversions(t *testing.T) {
	const ms = int64(time.Millisecond)
	req := func(prio string, sent, first int64) record.Request {
		return record.Request{Priority: prio, Model: "m", SentNS: sent, FirstToken: first}
	}
	tests := []struct {
		name     string
		rs       []record.Request
		pairs    int
		inverted float64
	}{
		{"in order", []record.Request{req("high", 1*ms, 10*ms), req("low", 2*ms, 20*ms)}, 0, 0},
		{"low overtakes waiting high", []record.Request{req("high", 1*ms, 30*ms), req("low", 3*ms, 20*ms)}, 1, 1},
		{"low sent first is no inversion", []record.Request{req("high", 3*ms, 30*ms), req("low", 1*ms, 20*ms)}, 0, 0},
		{"high never served counts", []record.Request{req("high", 1*ms, 0), req("low", 3*ms, 20*ms), req("low", 5*ms, 25*ms)}, 2, 1},
		{"other model", []record.Request{req("high", 1*ms, 30*ms), {Priority: "low", Model: "x", SentNS: 3 * ms, FirstToken: 20 * ms}}, 0, 0},
		{"two highs, one overtaken", []record.Request{req("high", 1*ms, 30*ms), req("high", 9*ms, 40*ms), req("low", 3*ms, 20*ms)}, 1, 0.5},
		// Two slots freed together: the high request sent 131 ms earlier
		// got its first token 30 µs after the low one. A tie, not an
		// inversion.
		{"a tie within tau", []record.Request{req("high", 1, 500*ms), req("low", 131*ms, 500*ms-30_000)}, 0, 0},
		{"just beyond tau", []record.Request{req("high", 1, 500*ms), req("low", 131*ms, 498*ms)}, 1, 1},
		// Sent 0.2 ms apart, the two may reach the target in either order:
		// the low one served a whole batch earlier is no inversion.
		{"sent within tau", []record.Request{req("high", 1*ms, 600*ms), req("low", 1*ms+200_000, 500*ms)}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, inv, _ := Inversions(tc.rs, time.Millisecond)
			if p != tc.pairs || inv != tc.inverted {
				t.Errorf("Inversions = %d, %v; want %d, %v", p, inv, tc.pairs, tc.inverted)
			}
		})
	}
}

// TestRecoveryStates: a burst whose windows never broke the bound is
// "not violated" and has no recovery time (not the width of a window);
// one that broke it recovers at the window after the last breach, from
// the burst's end; one still over the bound at the next burst never did.
func TestRecoveryStates(t *testing.T) {
	q := &q6{cfg: Default(true)} // bursts of 1 s every 5 s over 10 s; windows 1 s every 250 ms; hold 1 s; bound 2 s
	s := time.Second
	var rs []record.Request
	add := func(from, to time.Duration, ttft float64) {
		for at := from; at < to; at += 50 * time.Millisecond {
			rs = append(rs, record.Request{IntendedNS: int64(at), OK: true, FirstToken: int64(at) + 1, TTFTMs: ttft, EndNS: int64(at) + 2})
		}
	}
	add(0, 10*s, 100)                     // fast everywhere …
	add(1*s, 2500*time.Millisecond, 5000) // … but requests due in [1 s, 2.5 s) after burst 1 are slow
	add(9*s, 10*s, 5000)                  // and burst 2's tail never comes back before the end
	rec, err := q.recoveries(summary.Phase{Start: 0, End: 10 * s}, rs, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != 2 || rec[0].State != recovered || rec[1].State != unrecovered {
		t.Fatalf("states %+v", rec)
	}
	if rec[0].AfterMs != 1500 { // the first window without a slow request starts at 2.5 s; the burst ended at 1 s
		t.Errorf("recovered after %v ms, want 1500", rec[0].AfterMs)
	}
	quiet := []record.Request{}
	for at := time.Duration(0); at < 10*s; at += 50 * time.Millisecond {
		quiet = append(quiet, record.Request{IntendedNS: int64(at), OK: true, FirstToken: int64(at) + 1, TTFTMs: 100, EndNS: int64(at) + 2})
	}
	rec, _ = q.recoveries(summary.Phase{Start: 0, End: 10 * s}, quiet, 2000)
	mean, worst, violated, _ := recoveryMetrics(rec, 250*time.Millisecond)
	if rec[0].State != notViolated || mean.State != result.NotMeasurable || worst.State != result.NotMeasurable || violated.Value != 0 {
		t.Errorf("never over the bound: %+v, mean %+v: want not violated and no recovery time", rec, mean)
	}
}

// TestDrainLeavesBase: requests due while a burst's queue drains are not
// in the base window, so a burst's backlog cannot inflate the baseline.
func TestDrainLeavesBase(t *testing.T) {
	s := time.Second
	var rs []record.Request
	// one waiting before the burst; a burst [5 s, 6 s) leaves 40 waiting
	// until 8 s, the last leaving at 8 s.
	rs = append(rs, record.Request{IntendedNS: int64(4500 * time.Millisecond), FirstToken: int64(4600 * time.Millisecond)})
	for i := range 40 {
		at := 5*s + time.Duration(i)*25*time.Millisecond
		rs = append(rs, record.Request{IntendedNS: int64(at), FirstToken: int64(6*s + time.Duration(i)*50*time.Millisecond)})
	}
	got := drainEnds(rs, []window{{Start: 5 * s, End: 6 * s}})
	// one waited before the burst: the drain ends when at most one waits,
	// when the 39th of the 40 has its first token.
	if want := 6*s + 39*50*time.Millisecond - 50*time.Millisecond; got[0] != want {
		t.Errorf("drain ends at %v, want %v", got[0], want)
	}
}

func TestBurstWindows(t *testing.T) {
	q := &q6{cfg: Default(false)}
	ws := bursts(q.cfg.Schedule, time.Second)
	if len(ws) != 3 || ws[0].Start != time.Second || ws[0].End != 6*time.Second || ws[2].Start != 61*time.Second {
		t.Errorf("bursts %+v; want 3 of 5 s every 30 s from 1 s", ws)
	}
	p := summary.Phase{Start: time.Second}
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{{time.Second, true}, {5 * time.Second, true}, {6 * time.Second, false}, {31 * time.Second, true}, {40 * time.Second, false}} {
		if got := q.inBurst(p, &record.Request{IntendedNS: int64(tc.at)}); got != tc.want {
			t.Errorf("inBurst(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
}

func TestQ6Config(t *testing.T) {
	full, quick := Default(false), Default(true)
	if err := full.Validate(); err != nil {
		t.Fatalf("full defaults: %v", err)
	}
	if err := quick.Validate(); err != nil {
		t.Fatalf("quick defaults: %v", err)
	}
	if n := len(quick.Policies); quick.Schedule.Duration*time.Duration(n) > 30*time.Second {
		t.Errorf("quick sends %v of traffic, want ≤ 30 s", quick.Schedule.Duration*time.Duration(n))
	}
	cases := map[string]func(c *Config){
		"q6.schedule.process": func(c *Config) { c.Schedule.Process = "poisson"; c.Schedule.Count = 10 },
		"q6.policies":         func(c *Config) { c.Policies = []string{"lottery"} },
		"q6.high_share":       func(c *Config) { c.HighShare = 2 },
		"q6.hold":             func(c *Config) { c.Hold = 0 },
		"q6.stack":            func(c *Config) { c.Stack.LLMSlots = 0 },
	}
	for want, mutate := range cases {
		c := Default(true)
		mutate(c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v", want, err)
		}
	}
	p, err := (&q6{cfg: quick}).Plan(1)
	if err != nil || len(p.Phases) != 3 || p.Phases[0].Requests == 0 {
		t.Errorf("plan %+v, %v", p, err)
	}
}

// TestWindowAllFailedIsInfinite: a burst whose window's requests all
// failed has a worst p99 of +∞ (violated), never null or the answered
// requests' figure; one failure in 200 leaves the p99 finite, one in 50
// reaches its rank (50).
func TestWindowAllFailedIsInfinite(t *testing.T) {
	reqs := func(n, failed int) []record.Request {
		var out []record.Request
		for i := range n {
			r := record.Request{IntendedNS: int64(i) * int64(time.Second) / int64(n), Type: "llm"}
			if i >= failed {
				r.OK, r.FirstToken, r.TTFTMs = true, r.IntendedNS+1, 120
			}
			out = append(out, r)
		}
		return out
	}
	q := &q6{cfg: Default(true)}
	for _, tc := range []struct {
		name      string
		n, failed int
		worst     float64
	}{
		{"all failed", 5, 5, math.Inf(1)},
		{"1 of 200 failed", 200, 1, 120},
		{"1 of 50 failed", 50, 1, math.Inf(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := series.Compute(reqs(tc.n, tc.failed), series.Config{Width: time.Second, Step: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			r := burstRecovery{WorstMs: math.NaN()}
			q.judgeRecovery(&r, ws, 1000)
			if r.WorstMs != tc.worst || r.State == notViolated {
				t.Errorf("worst %v, state %s; want %v, violated", r.WorstMs, r.State, tc.worst)
			}
		})
	}
}
