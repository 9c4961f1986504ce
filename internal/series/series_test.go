package series_test

import (
	"math"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/series"
)

// steady makes one ok request every 100 ms for d, with TTFT given by f
// of its intended time.
func steady(d time.Duration, f func(at time.Duration) (ttftMs float64, ok bool)) []record.Request {
	var out []record.Request
	for at := time.Duration(0); at < d; at += 100 * time.Millisecond {
		ttft, ok := f(at)
		out = append(out, record.Request{IntendedNS: int64(at), OK: ok, SLOMet: ok && ttft <= 100,
			FirstToken: int64(at) + 1, TTFTMs: ttft, E2EMs: ttft + 50})
	}
	return out
}

func TestCompute(t *testing.T) {
	reqs := steady(4*time.Second, func(at time.Duration) (float64, bool) {
		return float64(at / time.Millisecond), at != 1500*time.Millisecond
	})
	ws, err := series.Compute(reqs, series.Config{Width: time.Second, Step: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 4 {
		t.Fatalf("%d windows, want 4", len(ws))
	}
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"w0 count", float64(ws[0].Count), 10},
		{"w1 errors", float64(ws[1].Errors), 1},
		{"w1 throughput", ws[1].Throughput, 9},
		{"w0 goodput (ttft ≤ 100 ms: 0 and 100)", ws[0].Goodput, 2},
		{"w0 ttft p50 (nearest rank of 0..900)", ws[0].TTFTP50, 400},
		{"w0 ttft p99", ws[0].TTFTP99, 900},
		{"w3 e2e p99", ws[3].E2EP99, 3950},
		{"w1 error rate", ws[1].ErrorRate, 0.1},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestComputeRejectsBadWindows(t *testing.T) {
	for _, c := range []series.Config{{Width: time.Millisecond}, {Width: time.Second, Step: 2 * time.Second}} {
		if _, err := series.Compute(nil, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestRecoveryAfter(t *testing.T) {
	// A fault at 2 s makes TTFT 500 ms until 4 s; it is 20 ms otherwise.
	fault := func(from, to time.Duration) func(time.Duration) (float64, bool) {
		return func(at time.Duration) (float64, bool) {
			if at >= from && at < to {
				return 500, true
			}
			return 20, true
		}
	}
	cfg := series.Config{Width: 500 * time.Millisecond, Step: 250 * time.Millisecond}
	for _, tc := range []struct {
		name      string
		reqs      []record.Request
		hold      time.Duration
		recovered bool
		afterMs   float64
	}{
		{"recovers once the fault's windows pass", steady(10*time.Second, fault(2*time.Second, 4*time.Second)), time.Second, true, 2500},
		{"never, when the fault lasts to the end", steady(6*time.Second, fault(2*time.Second, time.Hour)), time.Second, false, 0},
		{"an unaffected run recovers at once", steady(6*time.Second, fault(0, 0)), time.Second, true, 500},
		{"a hold longer than what is left is never met", steady(5*time.Second, fault(2*time.Second, 4*time.Second)), 5 * time.Second, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := series.Compute(tc.reqs, cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := series.RecoveryAfter(ws, int64(2*time.Second), "ttft_p99", 100, tc.hold)
			if r.Recovered != tc.recovered || (tc.recovered && r.AfterMs != tc.afterMs) {
				t.Errorf("recovered %v after %v ms (worst %v, %s); want %v after %v", r.Recovered, r.AfterMs, r.WorstMs, r.Note, tc.recovered, tc.afterMs)
			}
		})
	}
}

func TestRecoveryNeedsNoErrors(t *testing.T) {
	reqs := steady(6*time.Second, func(at time.Duration) (float64, bool) { return 20, at < 2*time.Second })
	ws, _ := series.Compute(reqs, series.Config{Width: 500 * time.Millisecond, Step: 250 * time.Millisecond})
	if r := series.RecoveryAfter(ws, int64(2*time.Second), "e2e_p99", 100, time.Second); r.Recovered {
		t.Errorf("failing requests counted as recovered: %+v", r)
	}
}

func TestDriftOf(t *testing.T) {
	// p99 grows 6 ms per minute: 0.1 ms per second.
	reqs := steady(3*time.Minute, func(at time.Duration) (float64, bool) { return 10 + 0.1*at.Seconds(), true })
	ws, _ := series.Compute(reqs, series.Config{Width: time.Second, Step: time.Second})
	d := series.DriftOf(ws, "ttft_p99", 1)
	if d.Points < 100 || math.Abs(d.SlopePerMin-6) > 0.1 || d.CILow > 6+1e-9 || d.CIHigh < 6-1e-9 {
		t.Errorf("drift %+v, want slope 6 ms/min inside its CI", d)
	}
	flat := series.DriftOf(ws[:2], "ttft_p99", 1)
	if !math.IsNaN(flat.SlopePerMin) {
		t.Errorf("two points gave a slope: %+v", flat)
	}
}

// TestRecover: the three states, on a series where a fault makes TTFT
// 500 ms (bound 100 ms) while its effect lasts, 20 ms otherwise; windows
// of 500 ms every 250 ms, requests every 100 ms.
func TestRecover(t *testing.T) {
	effect := func(from, to time.Duration) func(time.Duration) (float64, bool) {
		return func(at time.Duration) (float64, bool) {
			if at >= from && at < to {
				return 500, true
			}
			return 20, true
		}
	}
	s := func(d time.Duration) time.Duration { return d * time.Second }
	cfg := series.Config{Width: 500 * time.Millisecond, Step: 250 * time.Millisecond}
	for _, tc := range []struct {
		name                string
		reqs                []record.Request
		fault               series.Fault
		hold                time.Duration
		state               string
		afterMs, violatedMs float64 // violatedMs: from the fault's start
	}{
		{"a kill: recovered when the effect ends", steady(s(10), effect(s(2), s(4))), series.Fault{StartNS: int64(s(2))}, time.Second,
			series.Recovered, 2000, 0},
		{"a hold below the width is one window", steady(s(10), effect(s(2), s(4))), series.Fault{StartNS: int64(s(2))}, 100 * time.Millisecond,
			series.Recovered, 2000, 0},
		{"harm shows late: violated when it shows", steady(s(10), effect(s(3), s(4))), series.Fault{StartNS: int64(s(2))}, time.Second,
			series.Recovered, 2000, 1000},
		{"a fault with a duration recovers from its end, not before", steady(s(10), effect(s(2), s(4))),
			series.Fault{StartNS: int64(s(2)), EndNS: int64(s(6))}, time.Second, series.Recovered, 0, 0},
		{"a duration fault whose harm outlasts it", steady(s(10), effect(s(2), s(7))),
			series.Fault{StartNS: int64(s(2)), EndNS: int64(s(6))}, time.Second, series.Recovered, 1000, 0},
		{"no harm: never violated", steady(s(10), effect(0, 0)), series.Fault{StartNS: int64(s(2))}, time.Second,
			series.NeverViolated, 0, 0},
		{"harm that lasts to the end: never recovered", steady(s(6), effect(s(2), time.Hour)), series.Fault{StartNS: int64(s(2))}, time.Second,
			series.NeverRecovered, 0, 0},
		{"harm after the next fault is not this one's", steady(s(10), effect(s(5), s(7))),
			series.Fault{StartNS: int64(s(2)), HorizonNS: int64(4500 * time.Millisecond)}, time.Second, series.NeverViolated, 0, 0},
		{"failed requests violate", steady(s(10), func(at time.Duration) (float64, bool) { return 20, at < s(2) || at >= s(3) }),
			series.Fault{StartNS: int64(s(2))}, time.Second, series.Recovered, 1000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := series.Compute(tc.reqs, cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := series.Recover(ws, cfg, tc.fault, series.Rule{Metric: "ttft_p99", BoundMs: 100, Hold: tc.hold})
			if r.State != tc.state || r.ResolutionMs != 250 {
				t.Fatalf("state %s (resolution %v, %+v); want %s", r.State, r.ResolutionMs, r, tc.state)
			}
			if tc.state == series.Recovered && (r.AfterMs != tc.afterMs || r.RecoveredNS < tc.fault.EndNS) {
				t.Errorf("recovered after %v ms at %v; want %v ms, not before the fault's end", r.AfterMs, r.RecoveredNS, tc.afterMs)
			}
			if tc.state != series.NeverViolated && r.ToViolationMs() != tc.violatedMs {
				t.Errorf("violated %v ms after the fault; want %v", r.ToViolationMs(), tc.violatedMs)
			}
			if tc.state == series.NeverViolated && (r.Violated || r.WorstMs != 20) {
				t.Errorf("never violated, yet %+v", r)
			}
		})
	}
}

// TestRecoverRequests: the failures a fault could not have caused — of
// requests that ended before it began, or in flight when the next fault
// struck — do not make it violated.
func TestRecoverRequests(t *testing.T) {
	cfg := series.Config{Width: 500 * time.Millisecond, Step: 250 * time.Millisecond}
	rule := series.Rule{Metric: "ttft_p99", BoundMs: 100, Hold: time.Second}
	reqs := steady(10*time.Second, func(time.Duration) (float64, bool) { return 20, true })
	for i := range reqs {
		reqs[i].EndNS = reqs[i].IntendedNS + int64(50*time.Millisecond)
	}
	fail := func(at, end time.Duration) {
		k := int(at / (100 * time.Millisecond))
		reqs[k].OK, reqs[k].EndNS = false, int64(end)
	}
	fail(2900*time.Millisecond, 2950*time.Millisecond) // the previous fault's, ended before 3 s
	fail(6900*time.Millisecond, 7010*time.Millisecond) // in flight when the next fault struck at 7 s
	f := series.Fault{StartNS: int64(3 * time.Second), HorizonNS: int64(7 * time.Second)}
	r, err := series.RecoverRequests(reqs, cfg, f, rule)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != series.NeverViolated {
		t.Fatalf("state %s (violated at %d); want never violated", r.State, r.ViolatedNS)
	}
	fail(3100*time.Millisecond, 3200*time.Millisecond) // this fault's
	if r, _ = series.RecoverRequests(reqs, cfg, f, rule); r.State != series.Recovered || r.ToViolationMs() != 0 || r.AfterMs != 250 {
		t.Fatalf("%+v; want violated at once and recovered 250 ms later (the window after the failed request)", r)
	}
}

// TestPercentileLeavesInputAlone: the caller's slice is not sorted
// under it (it was, once).
func TestPercentileLeavesInputAlone(t *testing.T) {
	xs := []float64{3, 1, 2}
	if got := series.Percentile(xs, 50); got != 2 {
		t.Errorf("p50 %v, want 2", got)
	}
	if xs[0] != 3 || xs[1] != 1 || xs[2] != 2 {
		t.Errorf("Percentile sorted its input: %v", xs)
	}
}
