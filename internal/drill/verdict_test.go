package drill

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/summary"
)

func sec(x float64) int64 { return int64(x * float64(time.Second)) }

// synthRun is a run of chat requests every 50 ms over [0, span) s whose
// TTFT is ttft(intended s) (NaN: the request failed), with the faults
// performed at the given times, measured on 1 s windows every 250 ms and
// the rule TTFT p99 ≤ 1 s for 1 s.
func synthRun(t *testing.T, span float64, ttft func(at float64) float64, faults ...Event) *Run {
	t.Helper()
	var recs []record.Request
	for at := 0.0; at < span; at += 0.05 {
		v := ttft(at)
		r := record.Request{Kind: "request", Type: "llm", IntendedNS: sec(at), SentNS: sec(at), OK: !math.IsNaN(v)}
		if r.OK {
			r.TTFTMs, r.FirstToken, r.EndNS = v, sec(at+v/1000), sec(at+v/1000+0.1)
		} else {
			r.ErrorClass, r.EndNS = "reset", sec(at+0.3)
		}
		recs = append(recs, r)
	}
	cfg := Config{Events: faults, Series: series.Config{Width: time.Second, Step: 250 * time.Millisecond},
		Recovery: Recovery{Metric: "ttft_p99", Bound: time.Second, Hold: time.Second}}
	r := &Run{cfg: cfg, planned: Expand(faults), Records: recs, Sent: len(recs), Phase: phaseOf(span)}
	for i, e := range r.planned {
		r.Events = append(r.Events, Result{Seq: i, Action: e.Action, Target: e.Engine, IntendedNS: int64(e.At), ActualNS: int64(e.At), DoneNS: int64(e.At), Outcome: OutcomeOK})
	}
	if err := r.measure(); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRecoveryCensoredAtNextFault: a fault whose violation lasts past
// the next fault's start is censored there — (> 4 s: the 10 s horizon −
// the 1 s hold − the fault at 5 s), "not recovered before the next fault"
// — and never recovers at the later fault's recovery; no event's
// recovery (with its hold) ends after a later event's start.
func TestRecoveryCensoredAtNextFault(t *testing.T) {
	slow := func(at float64) float64 {
		if at >= 5 && at < 12 {
			return 3000
		}
		return 100
	}
	r := synthRun(t, 20, slow, Event{At: 5 * time.Second, Action: Kill, Engine: "a"}, Event{At: 10 * time.Second, Action: Kill, Engine: "b"})
	if len(r.Recovery) != 2 {
		t.Fatalf("recoveries %+v", r.Recovery)
	}
	first, second := r.Recovery[0], r.Recovery[1]
	if first.Verdict() != Censored || second.Verdict() != Recovered {
		t.Fatalf("verdicts %s, %s; want censored, recovered", first.Verdict(), second.Verdict())
	}
	m := first.Metrics()[0]
	if m.State != result.Bound || m.Interval[0] != 4000 || !math.IsInf(m.Interval[1], 1) || !strings.Contains(m.Reason, "before the next fault at 10.00 s") {
		t.Errorf("first fault's recovery %+v; want bound (> 4000 ms), censored at the next fault", m)
	}
	for i, x := range r.Recovery {
		if x.Verdict() != Recovered {
			continue
		}
		for _, y := range r.Recovery[i+1:] {
			if end := x.RecoveredNS + int64(x.HoldMs*1e6); end > y.EventNS {
				t.Errorf("fault %d's recovery ends at %.2f s, after fault %d started at %.2f s", x.Seq, float64(end)/1e9, y.Seq, float64(y.EventNS)/1e9)
			}
		}
	}
	slowest := SlowestRecovery(DefRecovery, r.Recovery)
	if slowest.State != result.Bound || slowest.Interval[0] != 4000 {
		t.Errorf("slowest %+v; want bound (> 4000 ms)", slowest)
	}
	// the last fault, with nothing after it, is never (not censored)
	r = synthRun(t, 20, func(at float64) float64 { return map[bool]float64{true: 3000, false: 100}[at >= 10] },
		Event{At: 5 * time.Second, Action: Kill, Engine: "a"}, Event{At: 10 * time.Second, Action: Kill, Engine: "b"})
	if v := r.Recovery[1].Verdict(); v != NeverRecovered || r.Recovery[1].Metrics()[0].State != result.Never {
		t.Errorf("last fault %s; want never recovered", v)
	}
}

// TestRecoveryVocabulary: no violation is 0 "no violation" (never is not
// used for it); a recovery shorter than the 250 ms step is bound
// [0, 0.25] s; one of 3.25 s is measured ± 0.25 s.
func TestRecoveryVocabulary(t *testing.T) {
	base := EventRecovery{Recovery: series.Recovery{EventNS: sec(5), FaultEndNS: sec(5), BoundMs: 1000, HoldMs: 1000, MetricKey: "ttft_p99", ResolutionMs: 250}}
	none := base
	none.State = series.NeverViolated
	quick := base
	quick.State, quick.Violated, quick.RecoveredNS = series.Recovered, true, sec(5.030)
	slow := base
	slow.State, slow.Violated, slow.RecoveredNS = series.Recovered, true, sec(8.25)
	defS := result.Def{Name: "recovery_s", Unit: result.Seconds}
	for _, tc := range []struct {
		name   string
		x      EventRecovery
		state  result.State
		value  float64
		lo, hi float64
	}{
		{"no violation", none, result.Measured, 0, 0, 0},
		{"30 ms on a 250 ms grid", quick, result.Bound, 0, 0, 0.25},
		{"3.25 s", slow, result.Measured, 3.25, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.x.RecoveryMetric(defS, tc.x.EventNS)
			switch {
			case m.State != tc.state:
				t.Fatalf("%+v; want %s", m, tc.state)
			case m.State == result.Measured && m.Value != tc.value:
				t.Errorf("value %v; want %v", m.Value, tc.value)
			case m.State == result.Bound && (m.Interval[0] != tc.lo || m.Interval[1] != tc.hi):
				t.Errorf("bound %v; want [%v, %v]", *m.Interval, tc.lo, tc.hi)
			case tc.name == "no violation" && !strings.HasPrefix(m.Reason, "no violation"):
				t.Errorf("reason %q", m.Reason)
			}
		})
	}
}

// TestSteadyStateIgnoresCutRequests: a request in flight when the fault
// struck and cut by it belongs to the fault: the steady state before it
// holds, and the run is comparable.
func TestSteadyStateIgnoresCutRequests(t *testing.T) {
	cut := func(at float64) float64 {
		if at >= 5.85 && at < 6.3 {
			return math.NaN() // cut by the kill at 6 s
		}
		return 100
	}
	r := synthRun(t, 12, cut, Event{At: 6 * time.Second, Action: Kill, Engine: "a"})
	if s := r.Steady; s.Disjoint < minSteadyWindows || s.Within != s.Windows {
		t.Fatalf("steady %+v: want every window before the fault within the rule", s)
	}
	if why := r.notSteady(); why != "" {
		t.Errorf("not steady: %s", why)
	}
	// a run with too little load before its first fault has no steady state
	r = synthRun(t, 12, cut, Event{At: 2500 * time.Millisecond, Action: Kill, Engine: "a"})
	if why := r.notSteady(); !strings.Contains(why, "no steady state to compare with") {
		t.Errorf("2.5 s lead-in: %q; want invalid", why)
	}
}

// TestAllFailedWindowIsWorstInfinite: a fault whose windows failed
// entirely (a gateway kill) has worst +∞ (state never), and is violated.
func TestAllFailedWindowIsWorstInfinite(t *testing.T) {
	down := func(at float64) float64 {
		if at >= 6 && at < 8 {
			return math.NaN()
		}
		return 100
	}
	r := synthRun(t, 14, down, Event{At: 6 * time.Second, Action: Kill, Engine: Gateway})
	x := r.Recovery[0]
	w := x.Metrics()[2]
	if !x.Violated || w.State != result.Never || !strings.HasPrefix(w.Reason, "+∞") {
		t.Errorf("violated %v, worst %+v; want +∞", x.Violated, w)
	}
	if !math.IsInf(x.WorstMs, 1) {
		t.Errorf("worst %v; want +Inf under the plain name", x.WorstMs)
	}
	checkWindowsFile(t, r)
	if !FailedAtRank(100, 2, 0.99) || FailedAtRank(100, 1, 0.99) || !FailedAtRank(3, 3, 0.99) || FailedAtRank(5, 0, 0.99) {
		t.Error("FailedAtRank: the nearest rank ⌈0.99 n⌉ falls on the failures")
	}
}

// TestSteadyDriftNeweyWest: on AR(1) noise (φ = 0.7) with no trend, the
// Newey–West 95 % interval holds the true slope 0 in most series (≥ 85 %
// of 300), where the plain OLS interval, which takes the windows for
// independent, does visibly less often; windows in a fault's disturbed
// span are left out.
func TestSteadyDriftNeweyWest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials, n = 300, 120
	nw, naive := 0, 0
	for range trials {
		ws := make([]series.Window, n)
		y := 0.0
		for i := range ws {
			y = 0.7*y + rng.NormFloat64()*10
			ws[i] = series.Window{StartNS: sec(float64(i)), EndNS: sec(float64(i + 1)), Count: 10, OK: 10, TTFTP99: 100 + y}
		}
		d := SteadyDrift(ws, "ttft_p99", 1, nil)
		if d.CILow <= 0 && 0 <= d.CIHigh {
			nw++
		}
		o := series.DriftOf(ws, "ttft_p99", 1)
		if o.CILow <= 0 && 0 <= o.CIHigh {
			naive++
		}
	}
	if nw < trials*85/100 || naive >= nw {
		t.Errorf("coverage Newey–West %d/%d, OLS %d/%d", nw, trials, naive, trials)
	}
	t.Logf("coverage of 0: Newey–West %d/%d, OLS %d/%d", nw, trials, naive, trials)
	ws := []series.Window{{StartNS: 0, EndNS: sec(1), Count: 1, TTFTP99: 1}, {StartNS: sec(1), EndNS: sec(2), Count: 1, TTFTP99: 1}}
	x := EventRecovery{Recovery: series.Recovery{EventNS: sec(1.5), FaultEndNS: sec(1.5), State: series.NeverViolated}}
	if got := len(disturbed([]EventRecovery{x})); got != 1 || !overlaps(ws[1], disturbed([]EventRecovery{x})) {
		t.Error("the window holding the fault is disturbed")
	}
}

func phaseOf(span float64) summary.Phase {
	return summary.Phase{Name: "t", End: time.Duration(sec(span))}
}

// TestSlowestRecovery: Q8's recovery_max_ms — faults with no violation
// count 0 (measured 0, not never); one below the step makes it
// bound [0, step]; one that never recovered by the end makes it never.
func TestSlowestRecovery(t *testing.T) {
	base := EventRecovery{Recovery: series.Recovery{EventNS: sec(5), FaultEndNS: sec(5), BoundMs: 1000, HoldMs: 1000, MetricKey: "ttft_p99", ResolutionMs: 250}}
	none := base
	none.State = series.NeverViolated
	quick := base
	quick.State, quick.Violated, quick.RecoveredNS = series.Recovered, true, sec(5.03)
	never := base
	never.State, never.Violated = series.NeverRecovered, true
	if m := SlowestRecovery(DefRecovery, []EventRecovery{none, none}); m.State != result.Measured || m.Value != 0 {
		t.Errorf("no violation: %+v; want measured 0", m)
	}
	if m := SlowestRecovery(DefRecovery, []EventRecovery{none, quick}); m.State != result.Bound || m.Interval[0] != 0 || m.Interval[1] != 250 {
		t.Errorf("below the step: %+v; want bound [0, 250]", m)
	}
	if m := SlowestRecovery(DefRecovery, []EventRecovery{none, never}); m.State != result.Never {
		t.Errorf("never recovered: %+v; want never", m)
	}
}

// checkWindowsFile: windows.jsonl writes a window whose p99 rank falls on
// failures as "+Inf" under the plain name, the successes' figure (or
// null) under …_ok_ms, and reads back to the same windows.
func checkWindowsFile(t *testing.T, r *Run) {
	t.Helper()
	files, err := r.Files()
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(files[1].Data), []byte("\n"))
	if len(lines) != len(r.Windows) {
		t.Fatalf("%d lines for %d windows", len(lines), len(r.Windows))
	}
	inf := 0
	for i, line := range lines {
		var row windowRow
		if err := json.Unmarshal(line, &row); err != nil {
			t.Fatalf("line %d %s: %v", i, line, err)
		}
		w := r.Windows[i]
		row.Events = nil
		if fmt.Sprint(rowOf(w)) != fmt.Sprint(row) { // fmt: NaN (null) equals NaN
			t.Errorf("line %d reads back as %+v; want %+v", i, row, rowOf(w))
		}
		if FailedAtRank(w.Count, w.Errors, 0.99) {
			inf++
			if !bytes.Contains(line, []byte(`"ttft_p99_ms":"+Inf"`)) || !bytes.Contains(line, []byte(`"e2e_p99_ms":"+Inf"`)) {
				t.Errorf("line %d, failures at the p99's rank: %s", i, line)
			}
		}
	}
	if inf == 0 {
		t.Error("no window with failures at its p99's rank: the check checked nothing")
	}
}

// TestRecoveryNotPastTheLoad: with no fault after it, a recovery whose
// hold is reached only in windows past the load's last send (each holding
// less of the load) was not observed whole: never recovered, not a
// recovery at 9.75 s on a quarter-full window.
func TestRecoveryNotPastTheLoad(t *testing.T) {
	slow := func(at float64) float64 {
		if at >= 10 && at < 19.7 {
			return 3000
		}
		return 100
	}
	r := synthRun(t, 20, slow, Event{At: 10 * time.Second, Action: Kill, Engine: "a"})
	if len(r.Recovery) != 1 || r.Recovery[0].Verdict() != NeverRecovered {
		t.Fatalf("recovery %+v; want never recovered", r.Recovery)
	}
	// recovering with a whole hold before the load's end still counts
	r = synthRun(t, 20, func(at float64) float64 {
		if at >= 10 && at < 15 {
			return 3000
		}
		return 100
	}, Event{At: 10 * time.Second, Action: Kill, Engine: "a"})
	if len(r.Recovery) != 1 || r.Recovery[0].Verdict() != Recovered {
		t.Fatalf("recovery %+v; want recovered", r.Recovery)
	}
}

// TestDriftLeavesOutRequestsTheFaultCut: a window that ends before a
// fault but holds requests the fault held up in flight (their first
// token after it) is the fault's, not a steady point of the drift.
func TestDriftLeavesOutRequestsTheFaultCut(t *testing.T) {
	held := func(at float64) float64 {
		if at >= 29.85 && at < 35 {
			return (35-at)*1000 + 100 // paused until 35 s
		}
		return 100
	}
	r := synthRun(t, 60, held, Event{At: 30 * time.Second, Action: Kill, Engine: "a"})
	if len(r.Recovery) != 1 || r.Recovery[0].CutFromNS == 0 || r.Recovery[0].CutFromNS > sec(29.9) {
		t.Fatalf("recovery %+v; want the cut requests from 29.85 s", r.Recovery)
	}
	d := SteadyDrift(r.Windows, "ttft_p99", 4, r.Recovery)
	if d.Points < 3 || d.SlopePerMin != 0 {
		t.Fatalf("drift %+v; want 0 over the steady windows (all 100 ms)", d)
	}
}
