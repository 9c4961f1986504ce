package q5

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/series"

	"github.com/sagebench/sagebench/internal/stack"
)

// TestStackYAML: the pool's stack parses, every engine a process.
func TestStackYAML(t *testing.T) {
	q := &q5{cfg: Default(true)}
	cfg, err := stack.ParseConfig(q.StackYAML())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Engines) != 4 {
		t.Fatalf("engines %+v", cfg.Engines)
	}
	for _, e := range cfg.Engines {
		if !e.Process {
			t.Errorf("engine %s is not a process", e.ID)
		}
		if e.Kind == "llm" && e.Slots == 0 {
			t.Errorf("engine %s runs its profile's whole batch: the pool's capacity is not capped", e.ID)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"default", func(*Config) {}, ""},
		{"no fast engine", func(c *Config) {
			for i := range c.Pool {
				c.Pool[i].Fast = false
			}
		}, "fast: true"},
		{"pool entry without profile", func(c *Config) { c.Pool[0].Profile = "" }, "q5.pool[0]"},
		{"target on no metric", func(c *Config) { c.Target["recovery"] = 10 }, "q5.target.recovery: no such metric"},
		{"target outside its domain", func(c *Config) { c.Target["urgent_fast_share"] = 2 }, "q5.target.urgent_fast_share: 2 is outside"},
		{"kill after the load", func(c *Config) { c.Drill.Events[0].At *= 10 }, "q5.drill.events[0]"},
		{"no kill", func(c *Config) { c.Drill.Events = c.Drill.Events[1:] }, "list one"},
		{"rate and utilisation", func(c *Config) { c.Load.Schedule.Rate = 10 }, "not both"},
		{"hold below the window", func(c *Config) { c.Drill.Recovery.Hold = 100 * time.Millisecond }, "q5.drill.recovery.hold"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Default(true)
			tc.edit(c)
			err := c.Validate()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v; want %q", err, tc.want)
			}
		})
	}
}

// llmRecords are ok chat completions every 50 ms from 0 to 10 s, every
// fifth urgent, served by engine (none: "").
func llmRecords(engine string) []record.Request {
	var out []record.Request
	for i := range 200 {
		at := int64(i) * int64(50*time.Millisecond)
		prio := "normal"
		if i%5 == 0 {
			prio = "high"
		}
		out = append(out, record.Request{Kind: "request", Type: "llm", Priority: prio, Engine: engine, OK: true, SLOMet: true,
			IntendedNS: at, FirstToken: at + 1, EndNS: at + int64(100*time.Millisecond), TTFTMs: 50})
	}
	return out
}

// TestRoutingNeedsEngineIDs: a target that reports no engine ID leaves
// the urgent-on-fast share not measurable (not 0); with IDs and a
// measured capacity, the shares and goodput ÷ capacity are measured.
func TestRoutingNeedsEngineIDs(t *testing.T) {
	q := &q5{cfg: Default(true)}
	k := kill{ok: true, engine: "llm-fast-0", atNS: int64(8 * time.Second)}
	rt := q.routing(&drill.Run{Records: llmRecords("")}, k)
	for _, m := range []result.Metric{rt.urgentFast, rt.allFast, rt.idealFast, rt.killedShare, rt.goodputPerCap} {
		if m.State != result.NotMeasurable {
			t.Errorf("without engine IDs or a capacity: %+v", m)
		}
	}
	c := &drill.Capacity{Rate: 40, Saturated: true, Engines: map[string]drill.EngineShare{
		"llm-fast-0": {Type: "llm", Rate: 24, Share: 0.6}, "llm-slow-0": {Type: "llm", Rate: 16, Share: 0.4}}}
	r := &drill.Run{Records: llmRecords("llm-fast-0"), Sizing: drill.Sizing{Utilisation: 0.5, Capacity: c, Rate: 20, Bottleneck: "llm"}}
	rt = q.routing(r, k)
	if rt.urgentFast.Value != 1 || rt.killedShare.Value != 0.6 || rt.idealFast.Value != 1 {
		t.Errorf("urgent on fast %+v, killed share %+v, ideal %+v", rt.urgentFast, rt.killedShare, rt.idealFast)
	}
	// 20 SLO-meeting requests per second ÷ a capacity of 40
	if g := rt.goodputPerCap; !g.Measured() || g.Value != 0.5 {
		t.Errorf("goodput per capacity %+v; want 0.5", g)
	}
}

// TestRecoveryStates: the primary reads each state of the kill's
// recovery — a time to ± the step, 0 "no violation" when the SLO was
// never broken (a target of 10 s is met), never when it did not come
// back by the end of the load (missed).
func TestRecoveryStates(t *testing.T) {
	q := &q5{cfg: Default(true)}
	r := &drill.Run{Records: llmRecords("llm-fast-0")}
	at := int64(4 * time.Second)
	for _, tc := range []struct {
		name  string
		rec   series.Recovery
		state result.State
		value float64
	}{
		{"recovered", series.Recovery{State: series.Recovered, Violated: true, AfterMs: 3250, RecoveredNS: at + int64(3250*time.Millisecond), ResolutionMs: 250}, result.Measured, 3.25},
		{"recovered after a restart", series.Recovery{State: series.Recovered, Violated: true, FaultEndNS: at + int64(3*time.Second), AfterMs: 1250,
			RecoveredNS: at + int64(4250*time.Millisecond), ResolutionMs: 250}, result.Measured, 4.25},
		{"never violated", series.Recovery{State: series.NeverViolated, ResolutionMs: 250}, result.Measured, 0},
		{"never recovered", series.Recovery{State: series.NeverRecovered, Violated: true, ResolutionMs: 250}, result.Never, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rec.EventNS, tc.rec.FaultEndNS, tc.rec.WorstMs = at, max(tc.rec.FaultEndNS, at), 2000
			k := kill{ok: true, atNS: at, recovery: drill.EventRecovery{Recovery: tc.rec}}
			rec, ratio := q.recovery(r, k)
			if rec.State != tc.state || rec.Value != tc.value || (rec.Measured() && tc.value > 0 && (rec.Resolution == nil || *rec.Resolution != 0.25)) {
				t.Fatalf("recovery %+v; want %s %v ± 0.25", rec, tc.state, tc.value)
			}
			if !ratio.Measured() || ratio.Interval == nil {
				t.Errorf("throughput ratio %+v", ratio)
			}
			met := result.Judge(result.New("", rec), result.Targets{"recovery_s": 10})[0].Met
			if met != (tc.state == result.Measured) {
				t.Errorf("target recovery_s ≤ 10 met %v", met)
			}
		})
	}
}

// TestThroughputRatioNormalisedByOffered: the ratio is delivered ÷
// offered after ÷ before, so a span that happened to be offered twice as
// many requests (Poisson noise) but delivered all of them reads 1, not 2;
// a span that delivered half of what it was offered reads 0.5.
func TestThroughputRatioNormalisedByOffered(t *testing.T) {
	var recs []record.Request
	add := func(from, to float64, n int, okEvery int) {
		for i := range n {
			at := from + (to-from)*float64(i)/float64(n)
			recs = append(recs, record.Request{IntendedNS: int64(at * 1e9), OK: okEvery == 1 || i%okEvery == 0})
		}
	}
	add(1, 5, 40, 1)  // before the kill at 5 s: 10/s offered, all delivered
	add(6, 10, 80, 1) // after: 20/s offered, all delivered
	m := throughputRatio(recs, int64(1e9), int64(5e9), int64(6e9), int64(10e9), "from the recovery")
	if !m.Measured() || m.Value != 1 || m.Interval == nil || m.Interval[0] > 1 || m.Interval[1] < 1 {
		t.Errorf("ratio %+v; want 1 with an interval around it", m)
	}
	recs = recs[:40]
	add(6, 10, 80, 2) // after: half delivered
	if m := throughputRatio(recs, int64(1e9), int64(5e9), int64(6e9), int64(10e9), ""); m.Value != 0.5 {
		t.Errorf("ratio %+v; want 0.5", m)
	}
	// the kill at 5 s cut the last 4 before it (failed, ending after it):
	// they are the kill's, not a loss of the span before it
	recs = recs[:40]
	for i := 36; i < 40; i++ {
		recs[i].OK, recs[i].EndNS = false, int64(5.2e9)
	}
	add(6, 10, 80, 1)
	if m := throughputRatio(recs, int64(1e9), int64(5e9), int64(6e9), int64(10e9), ""); m.Value != 1 {
		t.Errorf("ratio %+v; want 1 (the cut requests are the kill's)", m)
	}
}
