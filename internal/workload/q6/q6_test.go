package q6

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/summary"
)

func TestInversions(t *testing.T) {
	req := func(prio string, sent, first int64) record.Request {
		return record.Request{Priority: prio, Model: "m", SentNS: sent, FirstToken: first}
	}
	tests := []struct {
		name     string
		rs       []record.Request
		pairs    int
		inverted float64
	}{
		{"in order", []record.Request{req("high", 1, 10), req("low", 2, 20)}, 0, 0},
		{"low overtakes waiting high", []record.Request{req("high", 1, 30), req("low", 2, 20)}, 1, 1},
		{"low sent first is no inversion", []record.Request{req("high", 2, 30), req("low", 1, 20)}, 0, 0},
		{"high never served counts", []record.Request{req("high", 1, 0), req("low", 2, 20), req("low", 3, 25)}, 2, 1},
		{"other model", []record.Request{req("high", 1, 30), {Priority: "low", Model: "x", SentNS: 2, FirstToken: 20}}, 0, 0},
		{"two highs, one overtaken", []record.Request{req("high", 1, 30), req("high", 5, 40), req("low", 2, 20)}, 1, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, inv, _ := Inversions(tc.rs)
			if p != tc.pairs || inv != tc.inverted {
				t.Errorf("Inversions = %d, %v; want %d, %v", p, inv, tc.pairs, tc.inverted)
			}
		})
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
