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
