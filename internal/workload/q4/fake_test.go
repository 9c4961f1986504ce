package q4_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/target/targettest"
	"github.com/sagebench/sagebench/internal/workload/workloadtest"
)

// The fake's engines: each chat holds a slot for 100 ms (first token
// after 20 ms): slots × 10 chats/s per engine, exactly (the fake keeps
// slot time on a virtual clock).
const (
	fakeService = 100 * time.Millisecond
	fakeTTFT    = 20 * time.Millisecond
	sloTTFT     = 500 * time.Millisecond
)

// trueFrontier is the highest constant arrival rate a pool of capacity
// mu meets "q-quantile TTFT ≤ sloTTFT" at, in a trial of d seconds:
// below mu no request waits; at mu·(1+ε) the k-th request waits ε·tₖ, so
// the q-quantile waits ε·q·d, and the bound holds while ε ≤ (bound −
// first-token time) ÷ (q·d).
func trueFrontier(mu, q, d float64) float64 {
	return mu * (1 + (sloTTFT-fakeTTFT).Seconds()/(q*d))
}

// frontierCase is one Q4 run against the fake.
type frontierCase struct {
	name      string
	fixedPool bool    // engines added bring no capacity
	quantile  float64 // judged quantile
	precision float64
	probe     time.Duration // every trial's length (probe = max_probe)
	slots     int
	start     float64
}

func (c frontierCase) config() string {
	return workloadtest.Loose + fmt.Sprintf(`q4:
  scales: [1, 2]
  arrivals: constant
  start_rate: %[5]v
  probe: %[1]v
  max_probe: %[1]v
  precision: %[2]v
  max_probes: 9
  max_driver_lag: 60s
  slo: {quantile: %[3]v, ttft: %[4]v, e2e: 5s, min_success: 0.99}
  llm: {max_tokens: 4, prompt_words: 8}
`, c.probe, c.precision, c.quantile, sloTTFT, c.start)
}

// TestFrontierOfKnownCapacity runs Q4 against fakes of known capacity,
// at a p95 rule (5 %) and the quick one's (p75, 15 %): each scale's
// bracket holds the true frontier — within the precision when no probe
// came out undecided (an undecided probe bounds nothing, so the bracket
// may stay wider) — and the efficiency's interval holds the true
// efficiency —
// 1 for a pool that scales, ½ for one whose second engine adds nothing
// (the headline failing, as it must).
func TestFrontierOfKnownCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("sends about 25 s of traffic per case")
	}
	for _, c := range []frontierCase{
		{name: "p95 rule, linear pool", quantile: 0.95, precision: 0.05, probe: 4 * time.Second, slots: 4, start: 40},
		{name: "quick rule, pool that does not scale", fixedPool: true, quantile: 0.75, precision: 0.15, probe: 1500 * time.Millisecond, slots: 2, start: 15},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := targettest.NewSlots(t, targettest.SlotsConfig{Slots: c.slots, TTFT: fakeTTFT, Service: fakeService, Tokens: 4,
				FixedPool: c.fixedPool, QueueHeader: true})
			res := workloadtest.Run(t, 3*time.Minute, "Q4", c.config(), "--target", srv.URL)
			if res.Code != 0 || len(res.Runs) != 1 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
			}
			if testing.Verbose() {
				t.Log(res.Stdout)
			}
			r := res.Runs[0].Result
			mu := float64(c.slots) / fakeService.Seconds()
			want := map[int]float64{1: trueFrontier(mu, c.quantile, c.probe.Seconds()), 2: trueFrontier(2*mu, c.quantile, c.probe.Seconds())}
			wantEff := 1.0
			if c.fixedPool {
				want[2], wantEff = want[1], 0.5
			}
			delay := harnessDelay(t, res.Dirs[0])
			decided := true // every bracket within the precision
			for n, truth := range want {
				m, ok := r.Metric(fmt.Sprintf("engines=%d.max_rate", n))
				if !ok || m.Interval == nil {
					t.Fatalf("no bracket at n = %d: %+v\n%s", n, m, res.Stdout)
				}
				lo, hi := m.Interval[0], m.Interval[1]
				// TTFT counts from the intended send: what a loaded machine
				// adds to the fake's own wait (the driver's lag, the late
				// reads) moves the frontier by that delay ÷ (q · trial).
				j := max(delay[fmt.Sprintf("n%d@%.2f", n, lo)], delay[fmt.Sprintf("n%d@%.2f", n, hi)])
				if j > (sloTTFT-fakeTTFT).Seconds()*1000/2 {
					t.Skipf("n = %d: the harness added %.0f ms to the p99 TTFT of a boundary probe, more than half the SLO's margin: this machine (load average %.1f) cannot test the frontier now", n, j, record.LoadAverage())
				}
				tol := 0.03 + j/1000/(c.quantile*c.probe.Seconds())
				t.Logf("n = %d: true frontier %.2f req/s, bracket [%.2f, %.2f] (%s; harness delay p99 %.0f ms: tolerance %.1f %%)", n, truth, lo, hi, m.Reason, j, 100*tol)
				if !(lo <= truth*(1+tol) && hi >= truth*(1-tol)) {
					t.Errorf("n = %d: bracket [%.2f, %.2f] misses the true frontier %.2f\n%s", n, lo, hi, truth, res.Stdout)
				}
				if (hi-lo)/hi > c.precision+1e-9 {
					decided = false
					if !strings.Contains(res.Stdout, "undecided") {
						t.Errorf("n = %d: bracket [%.2f, %.2f] wider than %g, and no probe was undecided", n, lo, hi, c.precision)
					}
				}
			}
			eff, _ := r.Metric("engines=2.efficiency")
			tol := 0.03 + slices.Max(slices.Collect(maps.Values(delay)))/1000/(c.quantile*c.probe.Seconds())
			if eff.Interval == nil || !(eff.Interval[0] <= wantEff*(1+tol) && eff.Interval[1] >= wantEff*(1-tol)) {
				t.Errorf("efficiency %+v: its interval misses the true %.2f", eff, wantEff)
			}
			// The headline must be able to fail: with both brackets decided
			// a pool that does not scale is shown not to; undecided probes
			// (a loaded machine) leave brackets, and so the efficiency,
			// honestly wider.
			switch {
			case c.fixedPool && decided && !(eff.Interval[1] < 1):
				t.Errorf("a pool that does not scale: efficiency interval %v does not exclude 1", *eff.Interval)
			case c.fixedPool && !decided:
				t.Logf("undecided probes left the brackets wide (load average %.1f): efficiency %v not required to exclude 1", record.LoadAverage(), *eff.Interval)
			}
			if !strings.Contains(res.Stdout, "parallelism 2 does not apply to Q4") {
				t.Errorf("--parallelism not reported as not applying:\n%s", res.Stdout)
			}
		})
	}
}

// harnessDelay is, per probe (its trials pooled), the p99 of what the
// harness and the machine added to each request's TTFT beyond the
// fake's own queue wait and first-token time, in ms.
func harnessDelay(t *testing.T, dir string) map[string]float64 {
	t.Helper()
	by := map[string][]float64{}
	err := record.ReadRequestsFile(filepath.Join(dir, "requests.jsonl"), func(_ int, r record.Request) {
		if r.OK && r.QueueMs != nil {
			name, _, _ := strings.Cut(r.Phase, "#")
			by[name] = append(by[name], r.TTFTMs-*r.QueueMs-float64(fakeTTFT.Milliseconds()))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for name, xs := range by {
		out[name] = max(reqset.Quantile(xs, 0.99), 0)
	}
	return out
}

// TestFrontierOfUnresizableTarget: a target without the engines admin
// API (and no q4.scale_command) is measured once, as n = 1, and the
// record says so; its efficiency is not measurable.
func TestFrontierOfUnresizableTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("sends about 3 s of traffic")
	}
	srv := targettest.NewSlots(t, targettest.SlotsConfig{Slots: 2, Service: fakeService, NoAdmin: true})
	cfg := workloadtest.Loose + "q4: {scales: [1, 2], arrivals: constant, start_rate: 10, probe: 500ms, max_probe: 500ms, service_multiple: 0, precision: 0.5, max_probes: 3, max_driver_lag: 60s, llm: {max_tokens: 4, prompt_words: 8}}\n"
	res := workloadtest.Run(t, time.Minute, "Q4", cfg, "--target", srv.URL)
	if res.Code != 0 || len(res.Runs) != 1 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	r := res.Runs[0].Result
	if _, ok := r.Metric("engines=1.max_rate"); !ok {
		t.Errorf("no engines=1 frontier:\n%s", res.Stdout)
	}
	if _, ok := r.Metric("engines=2.max_rate"); ok {
		t.Errorf("a second scale on a target that cannot be resized")
	}
	if p := r.Primary; p.State != "not_measurable" || !strings.Contains(p.Reason, "one scale only") {
		t.Errorf("primary %+v", p)
	}
	if !strings.Contains(strings.Join(res.Runs[0].Notes, "\n"), "measured once at its current size, reported as n = 1") {
		t.Errorf("notes %v", res.Runs[0].Notes)
	}
}
