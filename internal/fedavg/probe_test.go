package fedavg

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/fedavg/fedavgtest"
)

func probeSim(t *testing.T, m *fedavgtest.Machine) ProbeResult {
	t.Helper()
	res, err := Probe(ProbeConfig{MaxWorkers: 2, Trial: m.Trial})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestProbeSimulatedMachines(t *testing.T) {
	tests := []struct {
		name       string
		sim        *fedavgtest.Machine
		maxWorkers int
		consistent bool
	}{
		{"quiet: two workers from the crossover up", fedavgtest.Quiet(), 2, true},
		{"steadily loaded: consistent, and wrong, which Revalidate heals", fedavgtest.Loaded(), 1, true},
		{"busier by the trial: trials never agree", &fedavgtest.Machine{Drift: 0.01}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := probeSim(t, tc.sim)
			if res.Consistent() != tc.consistent {
				t.Fatalf("consistent = %v, want %v (problems %v)", res.Consistent(), tc.consistent, res.Problems)
			}
			if !tc.consistent {
				if res.Attempts != 4 || !strings.Contains(res.Problems[0], "fastest trials differ") {
					t.Errorf("attempts %d, problems %v", res.Attempts, res.Problems)
				}
				return
			}
			if res.Attempts != 1 || res.Machine.MaxWorkers != tc.maxWorkers {
				t.Errorf("attempts %d, machine %v, want ceiling %d", res.Attempts, res.Machine, tc.maxWorkers)
			}
			if tc.maxWorkers == 2 && (res.Machine.BytesPerWorker < 200<<10 || res.Machine.BytesPerWorker > 300<<10) {
				t.Errorf("bytes per worker %d, want half the ~450 KB crossover", res.Machine.BytesPerWorker)
			}
		})
	}
}

func TestGridCheck(t *testing.T) {
	g := NewGrid([]int64{1 << 20, 2 << 20}, []int{1, 2})
	fill := func(ns ...float64) Grid {
		c := g.Merge(Grid{})
		for k, v := range ns {
			c.add(k/2, k%2, v)
			c.add(k/2, k%2, v*1.01)
		}
		return c
	}
	tests := []struct {
		name string
		g    Grid
		want string
	}{
		{"consistent", fill(100e3, 60e3, 200e3, 110e3), ""},
		{"time shrinks with size", fill(100e3, 60e3, 90e3, 110e3), "not more than"},
		{"speed-up above the worker count", fill(100e3, 40e3, 200e3, 110e3), "more than 2× can be"},
		{"one trial", g, "want 2 that agree"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := strings.Join(tc.g.Check(0.1), "; ")
			if (tc.want == "") != (p == "") || !strings.Contains(p, tc.want) {
				t.Errorf("problems %q, want %q", p, tc.want)
			}
		})
	}
	d := fill(100e3, 60e3, 200e3, 110e3)
	d.Trials[1][1] = []float64{110e3, 130e3}
	if p := d.Check(0.1); len(p) != 1 || !strings.Contains(p[0], "differ by 18%") {
		t.Errorf("disagreeing trials: %v", p)
	}
}

func TestGridMergeKeepsTheFastest(t *testing.T) {
	a := NewGrid([]int64{1 << 20, 2 << 20}, []int{1, 2})
	b := NewGrid([]int64{2 << 20}, []int{2, 4})
	for k := range 10 {
		a.add(1, 1, float64(200+k))
	}
	b.add(0, 0, 150)
	b.add(0, 1, 1) // a cell a lacks: left out
	m := a.Merge(b)
	if got := m.Trials[1][1]; len(got) != maxKept || got[0] != 150 || got[1] != 200 {
		t.Errorf("merged cell %v", got)
	}
	if len(a.Trials[1][1]) != maxKept || a.Trials[1][1][0] != 200 {
		t.Errorf("merge changed its receiver: %v", a.Trials[1][1])
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}

// TestRevalidateHealsAPoisonedProbe: a probe taken while another process
// held a core says one worker; revalidated on the quiet machine it is
// re-probed and says two. The reverse — a quiet probe revalidated while
// the machine is loaded — keeps the quiet model.
func TestRevalidateHealsAPoisonedProbe(t *testing.T) {
	poisoned := probeSim(t, fedavgtest.Loaded())
	quiet := probeSim(t, fedavgtest.Quiet())
	if poisoned.Machine.MaxWorkers != 1 || quiet.Machine.MaxWorkers != 2 {
		t.Fatalf("set-up: poisoned %v, quiet %v", poisoned.Machine, quiet.Machine)
	}
	tests := []struct {
		name    string
		cached  Grid
		now     *fedavgtest.Machine
		outcome Outcome
		want    Machine
	}{
		{"loaded cache, quiet now", poisoned.Grid, fedavgtest.Quiet(), Reprobed, quiet.Machine},
		{"quiet cache, loaded now", quiet.Grid, fedavgtest.Loaded(), Agrees, quiet.Machine},
		{"quiet cache, quiet now", quiet.Grid, fedavgtest.Quiet(), Agrees, quiet.Machine},
		{"no trials cached", NewGrid(quiet.Grid.Sizes, quiet.Grid.Workers), fedavgtest.Quiet(), Reprobed, quiet.Machine},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rv, err := Revalidate(ProbeConfig{MaxWorkers: 2, Trial: tc.now.Trial}, tc.cached)
			if err != nil {
				t.Fatal(err)
			}
			if rv.Outcome != tc.outcome || !rv.Result.Consistent() || rv.Reason == "" {
				t.Fatalf("outcome %s (%s), consistent %v %v; want %s", rv.Outcome, rv.Reason, rv.Result.Consistent(), rv.Result.Problems, tc.outcome)
			}
			got := rv.Result.Machine
			if got.MaxWorkers != tc.want.MaxWorkers || got.BytesPerWorker < tc.want.BytesPerWorker*9/10 || got.BytesPerWorker > tc.want.BytesPerWorker*11/10 {
				t.Errorf("machine %v, want about %v", got, tc.want)
			}
			if tc.outcome == Agrees && tc.now.Calls > 2*5*3 {
				t.Errorf("an agreeing revalidation ran %d trials: not cheap", tc.now.Calls)
			}
		})
	}
}

func TestCheckSizesFor(t *testing.T) {
	g := NewGrid([]int64{1 << 20, 2 << 20, 4 << 20, 8 << 20}, []int{1, 2})
	for _, tc := range []struct {
		m    Machine
		want string
	}{
		{Machine{BytesPerWorker: 8 << 20, MaxWorkers: 1}, "[8388608]"},
		{Machine{BytesPerWorker: 3 << 19, MaxWorkers: 2}, "[2097152 4194304 8388608]"},
		{Machine{BytesPerWorker: 1 << 10, MaxWorkers: 2}, "[1048576 8388608]"},
	} {
		if got := checkSizesFor(g, tc.m); fmt.Sprint(got) != tc.want {
			t.Errorf("checkSizesFor(%v) = %v, want %s", tc.m, got, tc.want)
		}
	}
}
