package summary

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
)

// req builds a successful request of phase at intended offset i·gap.
func req(phase, typ string, i int, gap time.Duration, e2eMs, lagMs float64, met bool) record.Request {
	intended := int64(i) * int64(gap)
	return record.Request{Kind: "request", Type: typ, Phase: phase, Tenant: "t", Priority: "normal",
		IntendedNS: intended + 1, SentNS: intended + 1 + int64(lagMs*1e6), E2EMs: e2eMs, ServiceMs: e2eMs - lagMs,
		LagMs: lagMs, OK: true, SLOMet: met}
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want)) }

func TestPercentilesAndRates(t *testing.T) {
	c := NewCollector()
	for i := range 1000 {
		c.Add(req("p", "llm", i, 10*time.Millisecond, float64(i+1), 0.1, i < 900))
	}
	c.Add(record.Request{Kind: "request", Type: "llm", Phase: "p", IntendedNS: 1, SentNS: 2, OK: false, ErrorClass: "timeout"})
	span := 10 * time.Second
	s, reasons := c.Summarize([]Phase{{Name: "p", End: span, Scheduled: 1001, ScheduleSpan: span}}, Validity{})
	if len(reasons) != 0 {
		t.Errorf("valid run judged invalid: %v", reasons)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"p50", s.E2E.P50, 500}, {"p90", s.E2E.P90, 900}, {"p99", s.E2E.P99, 990}, {"p99.9", s.E2E.P999, 999},
		{"max", s.E2E.Max, 1000}, {"mean", s.E2E.Mean, 500.5},
		{"goodput", s.Goodput, 90}, {"throughput", s.Throughput, 100},
		{"slo attainment", s.SLOAttainment, 900.0 / 1001}, {"success", s.SuccessRate, 1000.0 / 1001},
		{"target rate", s.TargetRate, 100.1}, {"duration", s.DurationSeconds, 10},
	}
	for _, c := range checks {
		if !near(c.got, c.want, 0.002) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.Requests != 1001 || s.Failed != 1 || s.Succeeded != 1000 {
		t.Errorf("counts %d/%d/%d", s.Requests, s.Succeeded, s.Failed)
	}
}

func TestGroupsPerLabel(t *testing.T) {
	c := NewCollector()
	for i := range 10 {
		typ := "llm"
		if i%2 == 1 {
			typ = "embedding"
		}
		r := req([]string{"fifo", "priority"}[i/5], typ, i, time.Millisecond, 10, 0, true)
		r.TokenNS = []int64{100e6, 110e6, 125e6}
		r.FirstToken, r.TTFTMs, r.TPOTMs = 100e6, 3, 12.5
		c.Add(r)
	}
	c.Add(record.Request{Kind: "stage", Stage: "retrieve", OK: true, E2EMs: 4})
	s, _ := c.Summarize([]Phase{{Name: "fifo", End: time.Second}, {Name: "priority", Start: time.Second, End: 2 * time.Second}}, Validity{})
	var keys []string
	for _, g := range s.Groups {
		keys = append(keys, labelKey(g.Labels))
	}
	got := strings.Join(keys, " ")
	for _, want := range []string{"phase=fifo;type=llm;", "type=embedding;", "tenant=t;", "priority=normal;", "phase=priority;", "stage=retrieve;"} {
		if !strings.Contains(got, want) {
			t.Errorf("group %s missing from %s", want, got)
		}
	}
	if keys[len(keys)-1] != "stage=retrieve;" {
		t.Errorf("stage groups should come last: %v", keys)
	}
	for _, g := range s.Groups {
		if g.Labels["phase"] == "fifo" && g.Labels["type"] == "llm" {
			if g.ITL.Count != 6 || !near(g.ITL.Max, 15, 0.01) || !near(g.TPOT.P50, 12.5, 0.01) || g.TTFT.Count != 3 {
				t.Errorf("fifo/llm ITL %+v TPOT %+v TTFT %+v", g.ITL, g.TPOT, g.TTFT)
			}
			if !near(g.Goodput, 3, 0.001) {
				t.Errorf("fifo/llm goodput %v, want 3 req/s over its 1 s phase", g.Goodput)
			}
		}
	}
	if s.Requests != 10 {
		t.Errorf("stage records counted as requests: %d", s.Requests)
	}
}

func TestValidity(t *testing.T) {
	span := time.Second
	cases := []struct {
		name    string
		sent    int     // of 100 scheduled
		lagMs   float64 // every request
		phase   Phase
		v       Validity
		wantSub string // "" = valid
	}{
		{"on time", 100, 0.5, Phase{}, Validity{}, ""},
		{"lagging", 100, 7, Phase{}, Validity{}, "schedule lag p99 7.00 ms is above 5.00 ms"},
		{"lag under a looser rule", 100, 7, Phase{}, Validity{MaxLagP99Ms: 10}, ""},
		{"dropped sends", 90, 0.5, Phase{}, Validity{}, "delivered rate 90.00 req/s is below 99% of the scheduled 100.00 req/s"},
		{"interrupted", 50, 0.5, Phase{Interrupted: true}, Validity{}, "interrupted"},
		{"closed loop has no schedule", 90, 7, Phase{ClosedLoop: true}, Validity{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			col := NewCollector()
			for i := range c.sent {
				col.Add(req("p", "llm", i, span/100, 5, c.lagMs, true))
			}
			ph := c.phase
			ph.Name, ph.End, ph.Scheduled, ph.ScheduleSpan = "p", span, 100, span
			_, reasons := col.Summarize([]Phase{ph}, c.v)
			got := strings.Join(reasons, "; ")
			if (c.wantSub == "") != (got == "") || !strings.Contains(got, c.wantSub) {
				t.Errorf("reasons %q, want %q", got, c.wantSub)
			}
		})
	}
}

func TestValidityValidate(t *testing.T) {
	for _, v := range []Validity{{MinDeliveredRatio: 1.5}, {MinDeliveredRatio: -1}, {MaxLagP99Ms: -1}} {
		if v.Validate() == nil {
			t.Errorf("%+v accepted", v)
		}
	}
	if err := DefaultValidity().Validate(); err != nil {
		t.Error(err)
	}
}

func TestCollectorConcurrent(t *testing.T) {
	c := NewCollector()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 250 {
				c.Add(req("p", "llm", g*250+i, time.Millisecond, float64(i), 0, true))
				_ = c.Live()
			}
		}()
	}
	wg.Wait()
	if l := c.Live(); l.Done != 1000 {
		t.Errorf("Live().Done = %d", l.Done)
	}
}

func ExampleCollector() {
	c := NewCollector()
	for i := range 100 {
		c.Add(record.Request{Kind: "request", Type: "embedding", Phase: "fifo", OK: true, SLOMet: i < 95,
			IntendedNS: int64(i) * 1e7, SentNS: int64(i)*1e7 + 1e5, LagMs: 0.1, E2EMs: float64(10 + i%10)})
	}
	s, reasons := c.Summarize([]Phase{{Name: "fifo", End: time.Second, Scheduled: 100, ScheduleSpan: time.Second}}, DefaultValidity())
	fmt.Printf("p50 %.0f ms, p99 %.0f ms, goodput %.0f req/s, SLO %.0f%%, valid %v\n",
		s.E2E.P50, s.E2E.P99, s.Goodput, 100*s.SLOAttainment, len(reasons) == 0)
	// Output: p50 14 ms, p99 19 ms, goodput 95 req/s, SLO 95%, valid true
}

func TestValidityPoolsLagOverOpenLoopPhases(t *testing.T) {
	cases := []struct {
		name      string
		hiccups   int // requests of phase "b" (of 100) lagging 8 ms
		wantValid bool
	}{
		{"two hiccups in one phase of four", 2, true},
		{"a phase that really lagged", 10, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			col := NewCollector()
			var phases []Phase
			for k, name := range []string{"a", "b", "c", "d"} {
				for i := range 100 {
					lag := 0.3
					if name == "b" && i < c.hiccups {
						lag = 8
					}
					col.Add(req(name, "llm", k*100+i, 10*time.Millisecond, 5, lag, true))
				}
				start := time.Duration(k) * time.Second
				phases = append(phases, Phase{Name: name, Start: start, End: start + time.Second, Scheduled: 100, ScheduleSpan: time.Second})
			}
			_, reasons := col.Summarize(phases, Validity{})
			if valid := len(reasons) == 0; valid != c.wantValid {
				t.Errorf("reasons %q; want valid=%v", reasons, c.wantValid)
			}
		})
	}
}

// TestHarnessOverhead: client time from the actual send minus the
// server's own account, over the requests that carry one.
func TestHarnessOverhead(t *testing.T) {
	c := NewCollector()
	for i := range 100 {
		c.Add(record.Request{Kind: "request", Type: "llm", OK: true, SentNS: int64(i + 1), LagMs: 1,
			FirstToken: 1, TTFTMs: 61.5, ServiceMs: 200.25, ServerTTFTMs: 60, ServerE2EMs: 200})
	}
	c.Add(record.Request{Kind: "request", Type: "llm", OK: true, SentNS: 1, E2EMs: 5, ServiceMs: 5}) // no server timing
	s, _ := c.Summarize(nil, Validity{})
	o := s.HarnessOverhead
	if o == nil || o.E2E.Count != 100 || o.TTFT.Count != 100 {
		t.Fatalf("overhead %+v", o)
	}
	if math.Abs(o.TTFT.P50-0.5) > 0.01 || math.Abs(o.E2E.P50-0.25) > 0.01 {
		t.Errorf("overhead p50 TTFT %v, E2E %v; want 0.5 and 0.25 ms", o.TTFT.P50, o.E2E.P50)
	}
	if empty, _ := NewCollector().Summarize(nil, Validity{}); empty.HarnessOverhead != nil {
		t.Error("overhead without any server timing")
	}
}
