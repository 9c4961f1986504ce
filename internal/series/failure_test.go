package series_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/series"
)

// window makes one window of n requests intended in [0, 1 s): the
// first failed of them fail (no first token), the others answer with
// TTFT i+1 ms and E2E i+11 ms, i = 0, 1, ….
func window(t *testing.T, n, failed int, typ string) series.Window {
	t.Helper()
	var reqs []record.Request
	for i := range n {
		r := record.Request{IntendedNS: int64(i) * int64(time.Second) / int64(n), Type: typ}
		if i >= failed {
			r.OK, r.FirstToken, r.TTFTMs, r.E2EMs = true, r.IntendedNS+1, float64(i+1), float64(i+11)
			if typ == protocol.TypeEmbedding {
				r.FirstToken, r.TTFTMs = 0, 0
			}
		}
		reqs = append(reqs, r)
	}
	ws, err := series.Compute(reqs, series.Config{Width: time.Second, Step: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return ws[0]
}

// TestWindowCountsFailures: the plain quantiles count a failed request as
// +∞ (nearest rank), the …OK ones are the successes' own.
func TestWindowCountsFailures(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		name                       string
		w                          series.Window
		ttft99, e2e99, e2e50       float64
		ttft99OK, e2e99OK, e2e50OK float64
	}{
		// 100 requests: the p99 is rank 99, one failure sorts at 100
		{"one failure of 100 stays below the p99's rank", window(t, 100, 1, protocol.TypeLLM), 100, 110, 61, 100, 110, 61},
		// two failures: rank 99 is a failure
		{"two failures of 100 reach the p99's rank", window(t, 100, 2, protocol.TypeLLM), inf, inf, 62, 100, 110, 61},
		{"half failed: the p50 too", window(t, 100, 51, protocol.TypeLLM), inf, inf, inf, 100, 110, 86},
		{"everything failed: +∞, never the successes' nothing", window(t, 20, 20, protocol.TypeLLM), inf, inf, inf, nan, nan, nan},
		{"a failed embedding has no TTFT to wait for", window(t, 100, 2, protocol.TypeEmbedding), nan, inf, 62, nan, 110, 61},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"ttft p99", tc.w.TTFTP99, tc.ttft99}, {"e2e p99", tc.w.E2EP99, tc.e2e99}, {"e2e p50", tc.w.E2EP50, tc.e2e50},
				{"ttft p99 ok", tc.w.TTFTP99OK, tc.ttft99OK}, {"e2e p99 ok", tc.w.E2EP99OK, tc.e2e99OK}, {"e2e p50 ok", tc.w.E2EP50OK, tc.e2e50OK},
			} {
				if !same(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
		})
	}
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// TestFailedWindowViolates: a window whose p99 is +∞ breaks the rule,
// and a fault whose windows all failed never recovers, its worst +∞.
func TestFailedWindowViolates(t *testing.T) {
	rule := series.Rule{Metric: "ttft_p99", BoundMs: 1000, Hold: time.Second}
	if w := window(t, 100, 2, protocol.TypeLLM); series.Within(w, rule) {
		t.Errorf("a window with +∞ p99 kept the rule: %+v", w)
	}
	cfg := series.Config{Width: 500 * time.Millisecond, Step: 250 * time.Millisecond}
	reqs := steady(6*time.Second, func(at time.Duration) (float64, bool) { return 20, at < 2*time.Second })
	ws, err := series.Compute(reqs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := series.Recover(ws, cfg, series.Fault{StartNS: int64(2 * time.Second)}, rule)
	if r.State != series.NeverRecovered || !math.IsInf(r.WorstMs, 1) {
		t.Errorf("every request after the fault failed: state %s, worst %v; want never recovered, +Inf", r.State, r.WorstMs)
	}
	for _, w := range ws[9:] {
		if !math.IsInf(w.TTFTP99, 1) || !math.IsNaN(w.TTFTP99OK) {
			t.Fatalf("a 100 %%-failed window: p99 %v, successes' %v; want +Inf and NaN", w.TTFTP99, w.TTFTP99OK)
		}
	}
}

// TestDriftSkipsFailedWindows: a window at +∞ is no point of a trend.
func TestDriftSkipsFailedWindows(t *testing.T) {
	reqs := steady(time.Minute, func(at time.Duration) (float64, bool) {
		return 10 + 0.1*at.Seconds(), at < 20*time.Second || at >= 22*time.Second
	})
	ws, _ := series.Compute(reqs, series.Config{Width: time.Second, Step: time.Second})
	d := series.DriftOf(ws, "ttft_p99", 1)
	if d.Points != 58 || math.Abs(d.SlopePerMin-6) > 0.1 {
		t.Errorf("drift %+v; want 58 points and slope 6 ms/min", d)
	}
}

// TestMsJSON: a number, "+Inf" or null, and back.
func TestMsJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    float64
		json string
	}{
		{"measured", 12.5, `12.5`},
		{"failures at the rank", math.Inf(1), `"+Inf"`},
		{"nothing to measure", math.NaN(), `null`},
		{"zero is a value", 0, `0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(struct{ P series.Ms }{series.Ms(tc.v)})
			if err != nil || string(b) != `{"P":`+tc.json+`}` {
				t.Fatalf("marshal %v: %s %v", tc.v, b, err)
			}
			var back struct{ P series.Ms }
			if err := json.Unmarshal(b, &back); err != nil || !same(float64(back.P), tc.v) {
				t.Errorf("round trip of %s: %v %v", b, back.P, err)
			}
		})
	}
	for _, bad := range []string{`"Inf"`, `"12"`, `-1`, `"-Inf"`, `true`, `1e999`} {
		var m series.Ms
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("%s accepted as %v", bad, m)
		}
	}
	if _, err := json.Marshal(series.Ms(math.Inf(-1))); err == nil {
		t.Error("-Inf marshalled")
	}
}

// FuzzMs: whatever the bytes, UnmarshalJSON gives a value that
// marshals again to what it reads back as.
func FuzzMs(f *testing.F) {
	for _, s := range []string{`12.5`, `"+Inf"`, `null`, `0`, `-1`, `"x"`, `1e308`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m series.Ms
		if json.Unmarshal(b, &m) != nil {
			return
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%q read as %v does not marshal: %v", b, m, err)
		}
		var back series.Ms
		if err := json.Unmarshal(out, &back); err != nil || !same(float64(back), float64(m)) {
			t.Fatalf("%q → %v → %s → %v %v", b, m, out, back, err)
		}
	})
}
