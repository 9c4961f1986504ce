package fedavg

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/fedavg/fedavgtest"
)

func TestGridCheck(t *testing.T) {
	g := NewGrid(4096, []int64{1 << 20, 2 << 20}, []int{1, 2})
	fill := func(ns ...float64) Grid {
		c := g.Merge(Grid{Dim: 4096})
		for k, v := range ns {
			c.add(k/2, k%2, v)
			c.add(k/2, k%2, v*1.01)
		}
		for i := range c.Sizes {
			for range minRounds {
				c.addRound(i, []float64{ns[2*i], ns[2*i+1]})
			}
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
		{"no paired rounds", fill(100e3, 60e3, 200e3, 110e3).withRounds(false), "0 paired rounds, want 3"},
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

func TestGridValidate(t *testing.T) {
	ok := func() Grid {
		g := NewGrid(4096, []int64{1 << 20, 2 << 20}, []int{1, 2})
		g.add(0, 0, 10)
		g.addRound(1, []float64{20, 15})
		return g
	}
	tests := []struct {
		name   string
		break_ func(*Grid)
		want   string
	}{
		{"valid", func(*Grid) {}, ""},
		{"no dim", func(g *Grid) { g.Dim = 0 }, "want dim"},
		{"a size below one client", func(g *Grid) { g.Sizes[0] = 4 }, "at least one client"},
		{"equal sizes", func(g *Grid) { g.Sizes[1] = g.Sizes[0] }, "must ascend"},
		{"workers not from 1", func(g *Grid) { g.Workers[0] = 2 }, "starting at 1"},
		{"equal workers", func(g *Grid) { g.Workers[1] = 1 }, "must ascend"},
		{"too many sizes", func(g *Grid) { g.Sizes = make([]int64, maxSizes+1) }, "sizes"},
		{"missing round rows", func(g *Grid) { g.Rounds = nil }, "round rows"},
		{"a short round", func(g *Grid) { g.Rounds[1][0] = []float64{20} }, "paired round"},
		{"a NaN in a round", func(g *Grid) { g.Rounds[1][0][1] = math.NaN() }, "paired round"},
		{"too many rounds", func(g *Grid) { g.Rounds[0] = make([][]float64, maxRounds+1) }, "at most 16"},
		{"too many trials", func(g *Grid) { g.Trials[0][0] = make([]float64, maxKept+1) }, "at most 8"},
		{"an infinite trial", func(g *Grid) { g.Trials[0][0][0] = math.Inf(1) }, "positive times"},
		{"trials out of order", func(g *Grid) { g.Trials[0][0] = []float64{2, 1} }, "ascending"},
		// the real trial allocates the largest size and an aggregator per count
		{"a 64 GiB size", func(g *Grid) { g.Sizes[1] = 1 << 36 }, "at most 1073741824 bytes"},
		{"a million workers", func(g *Grid) { g.Workers[1] = 1 << 20 }, "at most 4096"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := ok()
			tc.break_(&g)
			err := g.Validate()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
	if err := ValidateGrids([]Grid{ok(), ok()}); err == nil || !strings.Contains(err.Error(), "must ascend") {
		t.Errorf("two grids of one dim: %v", err)
	}
	other := NewGrid(8192, []int64{1 << 20, 2 << 20}, []int{1, 2, 4})
	if err := ValidateGrids([]Grid{ok(), other}); err == nil || !strings.Contains(err.Error(), "want one list") {
		t.Errorf("grids of different worker counts (the real trial builds the first's aggregators): %v", err)
	}
}

func TestGridMerge(t *testing.T) {
	a := NewGrid(4096, []int64{1 << 20, 2 << 20}, []int{1, 2})
	b := NewGrid(4096, []int64{2 << 20}, []int{1, 2})
	for k := range 10 {
		a.add(1, 1, float64(200+k))
	}
	for k := range maxRounds {
		a.addRound(1, []float64{100, float64(k)})
	}
	b.add(0, 1, 150)
	b.addRound(0, []float64{100, 99})
	m := a.Merge(b)
	if got := m.Trials[1][1]; len(got) != maxKept || got[0] != 150 || got[1] != 200 {
		t.Errorf("merged cell %v: want the fastest kept", got)
	}
	if r := m.Rounds[1]; len(r) != maxRounds || r[0][1] != 1 || r[maxRounds-1][1] != 99 {
		t.Errorf("merged rounds %v: want the latest %d", r, maxRounds)
	}
	if len(a.Trials[1][1]) != maxKept || a.Trials[1][1][0] != 200 || a.Rounds[1][maxRounds-1][1] != maxRounds-1 {
		t.Errorf("merge changed its receiver: %v", a.Trials[1][1])
	}
	c := NewGrid(8192, []int64{2 << 20}, []int{1, 2})
	c.add(0, 1, 1)
	if o := a.Merge(c); o.Trials[1][1][0] != 200 {
		t.Errorf("a grid of another dim merged: %v", o.Trials[1][1])
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}

// TestRevalidateHealsAPoisonedProbe: a probe taken while another process
// held a core says one worker; revalidated on the quiet machine it is
// re-probed and says two. The reverse — a quiet probe revalidated while
// the machine is loaded — keeps the quiet model and its paired rounds.
func TestRevalidateHealsAPoisonedProbe(t *testing.T) {
	poisoned := probeSim(t, fedavgtest.Loaded())
	quiet := probeSim(t, fedavgtest.Quiet())
	if auto(t, poisoned.Machine, 512, 8192) != 1 || auto(t, quiet.Machine, 512, 8192) != 2 {
		t.Fatalf("set-up: poisoned %v, quiet %v", poisoned.Machine, quiet.Machine)
	}
	var empty []Grid
	for _, g := range quiet.Grids {
		empty = append(empty, NewGrid(g.Dim, g.Sizes, g.Workers))
	}
	tests := []struct {
		name    string
		cached  []Grid
		now     *fedavgtest.Machine
		outcome Outcome
		why     string
		rounds  bool // the checked cells' rounds were kept
	}{
		{"loaded cache, quiet now", poisoned.Grids, fedavgtest.Quiet(), Reprobed, "cached", true},
		{"quiet cache, loaded now", quiet.Grids, fedavgtest.Loaded(), Agrees, "busier now", false},
		{"quiet cache, quiet now", quiet.Grids, fedavgtest.Quiet(), Agrees, "pooled", true},
		{"no trials cached", empty, fedavgtest.Quiet(), Reprobed, "too few", true},
		// a lucky trial 30 % below the next fails the cache's checks; merged
		// back into the re-probe it would fail them on every later start
		{"a lucky trial cached", lucky(quiet.Grids), fedavgtest.Quiet(), Reprobed, "failed its checks", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rv, err := Revalidate(ProbeConfig{MaxWorkers: 2, Trial: tc.now.Trial}, tc.cached)
			if err != nil {
				t.Fatal(err)
			}
			if rv.Outcome != tc.outcome || !rv.Result.Consistent() || !strings.Contains(rv.Reason, tc.why) {
				t.Fatalf("outcome %s (%s), consistent %v %v; want %s (%s)", rv.Outcome, rv.Reason, rv.Result.Consistent(), rv.Result.Problems, tc.outcome, tc.why)
			}
			if !rv.Result.Machine.Equal(quiet.Machine) {
				t.Errorf("machine %v, want %v", rv.Result.Machine, quiet.Machine)
			}
			k := len(quiet.Grids) - 1
			g, last := rv.Result.Grids[k], len(quiet.Grids[k].Sizes)-1
			if kept := len(g.Rounds[last]) > len(quiet.Grids[k].Rounds[last]); tc.outcome == Agrees && kept != tc.rounds {
				t.Errorf("%d rounds at 16 MiB after, %d cached: pooled %v, want %v", len(g.Rounds[last]), len(quiet.Grids[k].Rounds[last]), kept, tc.rounds)
			}
			if tc.outcome == Agrees && tc.now.Calls > 2*3*6*4 { // 2 dims, at most 3 sizes, 6 rounds of 4 trials
				t.Errorf("an agreeing revalidation ran %d trials: not cheap", tc.now.Calls)
			}
		})
	}
}

func TestCheckSizesFor(t *testing.T) {
	g := NewGrid(4096, []int64{1 << 20, 2 << 20, 4 << 20, 8 << 20}, []int{1, 2})
	for _, tc := range []struct {
		m    DimModel
		want string
	}{
		{DimModel{BytesPerWorker: 8 << 20, MaxWorkers: 1}, "[8388608]"},
		{DimModel{BytesPerWorker: 2 << 20, MaxWorkers: 2}, "[2097152 4194304 8388608]"},
		{DimModel{BytesPerWorker: 1 << 10, MaxWorkers: 2}, "[1048576 8388608]"},
	} {
		if got := checkSizesFor(g, tc.m); fmt.Sprint(got) != tc.want {
			t.Errorf("checkSizesFor(%v) = %v, want %s", tc.m, got, tc.want)
		}
	}
}

// TestRevalidateRefinesOnPooledMedians: a cache in which two workers were
// 1.5 % faster at 16 MiB (a tie: one worker), revalidated on a machine as
// quiet on which they are 7 % faster: the new rounds are pooled and the
// pooled median moves the model (refined), by the paired rule.
func TestRevalidateRefinesOnPooledMedians(t *testing.T) {
	share := func(s float64) *fedavgtest.Machine {
		return &fedavgtest.Machine{Jitter: 0.01, Share: func(int, int) float64 { return s }}
	}
	cached := probeSim(t, share(0.974))
	if auto(t, cached.Machine, 512, 8192) != 1 {
		t.Fatalf("set-up: %v", cached.Machine)
	}
	rv, err := Revalidate(ProbeConfig{MaxWorkers: 2, Trial: share(0.92).Trial}, cached.Grids)
	if err != nil {
		t.Fatal(err)
	}
	if rv.Outcome != Refined || auto(t, rv.Result.Machine, 512, 8192) != 2 || auto(t, rv.Result.Machine, 256, 8192) != 1 {
		t.Fatalf("outcome %s (%s), machine %v; want refined to 2 workers at 16 MiB only", rv.Outcome, rv.Reason, rv.Result.Machine)
	}
}

// lucky returns a copy of gs whose first grid's one-worker cell at the
// largest size holds a trial 30 % below its fastest.
func lucky(gs []Grid) []Grid {
	out := make([]Grid, len(gs))
	for k, g := range gs {
		out[k] = g.withRounds(true)
	}
	last := len(out[0].Sizes) - 1
	c := slices.Clone(out[0].Trials[last][0])
	out[0].Trials[last][0] = append([]float64{c[0] * 0.7}, c...)[:min(len(c)+1, maxKept)]
	return out
}
