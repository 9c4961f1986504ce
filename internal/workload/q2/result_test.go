package q2

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// rounds are ran phases of policies, nRounds each, with their records:
// critical LLM requests of TTFT ttft[policy] (ms), ok unless failed.
func rounds(nRounds int, ttft map[string]float64, failed map[string]bool) ([]ranPhase, map[string][]record.Request) {
	var ran []ranPhase
	by := map[string][]record.Request{}
	at := time.Duration(0)
	for r := range nRounds {
		for _, pol := range []string{"fifo", "priority", "fair_share"} {
			name := phaseName(pol, r, nRounds)
			ran = append(ran, ranPhase{Phase: summary.Phase{Name: name, Start: at, End: at + time.Second}, policy: pol, round: r})
			for i := range 50 {
				ok := !failed[pol] || i%2 == 0
				by[name] = append(by[name], record.Request{Phase: name, Type: protocol.TypeLLM, Priority: protocol.PriorityCritical,
					OK: ok, SLOMet: ok && ttft[pol] < 500, TTFTMs: ttft[pol] + float64(i+r), FirstToken: 1, E2EMs: 900})
			}
			at += time.Second
		}
	}
	return ran, by
}

func (q *q2) resultOf(ran []ranPhase, by map[string][]record.Request) result.Result {
	var pols []policyFigures
	for _, p := range policiesRun(ran) {
		pols = append(pols, q.policyResult(p, ran, by, nil))
	}
	return q.result(pols)
}

// TestAnswerPerPolicy: the answer names the policy with the lowest
// critical p99 TTFT and gives each policy's change against fifo with its
// p over rounds; with one round there is no p-value, and it says so.
func TestAnswerPerPolicy(t *testing.T) {
	q := &q2{cfg: Default(false)}
	res := q.resultOf(rounds(4, map[string]float64{"fifo": 2000, "priority": 100, "fair_share": 1900}, nil))
	if err := res.Check(); err != nil {
		t.Fatal(err)
	}
	if p := res.Primary; p.Name != "best_critical_ttft_p99_ms" || !strings.Contains(p.Reason, "under priority") {
		t.Errorf("primary %+v", p)
	}
	for _, want := range []string{"priority gave the critical class the lowest p99 TTFT: 151 ms (n = 200) against 2,051 ms (n = 200) under fifo (-92.6 %, p = 0.029 over 4 rounds)",
		"SLO attainment 100.0 % against 0.0 % (+100.0 points, p = 0.029 over 4 rounds)", "; fair_share 1,951 ms (n = 200) (-4.9 %, p = 0.029 over 4 rounds), 0.0 %"} {
		if !strings.Contains(res.Answer, want) {
			t.Errorf("answer %q\nlacks %q", res.Answer, want)
		}
	}
	one := q.resultOf(rounds(2, map[string]float64{"fifo": 2000, "priority": 100, "fair_share": 1900}, nil))
	if p, _ := one.Metric("priority.critical_ttft_p99_p"); !p.Measured() {
		t.Errorf("two rounds: p %+v, answer %q", p, one.Answer)
	}
	// One round of 50 critical requests: a p99 of 50 is its maximum, not
	// a measurement; the answer says what is known, with n.
	small := q.resultOf(rounds(1, map[string]float64{"fifo": 2000, "priority": 100, "fair_share": 1900}, nil))
	if small.Primary.State != result.NotMeasurable || !strings.Contains(small.Answer, "fifo ≥ 2,047 ms (n = 50), SLO attainment 0.0 % (n = 50)") {
		t.Errorf("one round of 50: primary %+v, answer %q", small.Primary, small.Answer)
	}
}

// TestAnswerWhenNoPolicyHelps: the headline can fail — when no policy
// beats fifo for the critical class the answer says so; a policy whose
// critical requests half fail is not the best, however fast the rest.
func TestAnswerWhenNoPolicyHelps(t *testing.T) {
	q := &q2{cfg: Default(false)}
	res := q.resultOf(rounds(2, map[string]float64{"fifo": 300, "priority": 10, "fair_share": 900}, map[string]bool{"priority": true}))
	if !strings.HasPrefix(res.Answer, "fifo gave the critical class the lowest p99 TTFT") || !strings.Contains(res.Answer, "no other policy did better") {
		t.Errorf("answer %q", res.Answer)
	}
	if m, _ := res.Metric("priority.critical_ttft_p99_ms"); m.State != result.Never || !strings.Contains(m.Reason, "+∞") {
		t.Errorf("half the critical requests failed: %+v, want +∞ (never answered)", m)
	}
}

func TestGaugeOccupancy(t *testing.T) {
	s := func(ms int, d float64) depthSample {
		return depthSample{at: time.Duration(ms) * time.Millisecond, depth: d}
	}
	busy, mean, most := gaugeOccupancy([]depthSample{s(0, 0), s(100, 4), s(200, 2), s(300, 0)})
	if math.Abs(busy-0.5) > 1e-9 || math.Abs(mean-1.5) > 1e-9 || most != 4 {
		t.Errorf("busy %v mean %v max %v; want 0.5, 1.5, 4", busy, mean, most)
	}
	if b, _, _ := gaugeOccupancy(nil); !math.IsNaN(b) {
		t.Errorf("no samples: %v", b)
	}
}
