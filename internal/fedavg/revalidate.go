package fedavg

import (
	"fmt"
	"slices"
	"time"
)

// Outcome says what Revalidate made of a cached probe.
type Outcome string

const (
	// Agrees: the cells measured now are within the tolerance of the
	// cache, or slower (the machine is busier now); the cache stands,
	// with the new evidence merged in as Revalidate says.
	Agrees Outcome = "agrees"
	// Refined: the paired rounds measured now, pooled with the cached
	// ones, changed the model.
	Refined Outcome = "refined"
	// Reprobed: a cell ran faster now than the cache by more than the
	// tolerance (the cache was taken under load), or the cache held no
	// trials to compare, or failed its checks: the machine was probed
	// again, and its paired rounds replace the cached ones.
	Reprobed Outcome = "reprobed"
)

// Revalidation is what Revalidate measured and decided.
type Revalidation struct {
	Outcome Outcome
	// Reason names the cell that decided, e.g. "dim 8192, 16 MiB with 2
	// workers: 210 µs now, 350 µs cached".
	Reason string
	// Checked holds the cells measured to decide.
	Checked []Grid
	// Result is the probe to use from now on: the cached grids merged
	// with what was measured, refitted and rechecked.
	Result ProbeResult
}

// Revalidate checks cached probe grids cheaply against the machine as it
// is now: it times a few sizes per dimension (the largest, and the sizes
// around the cached model's crossover) with every worker count in
// cfg.Rounds paired rounds, once, and compares their fastest trials with
// the cache's:
//   - a cell faster now by more than cfg.Tolerance means the cache was
//     measured under load: the whole grid is probed again, and the new
//     paired rounds replace the cached ones (Reprobed);
//   - a cell slower now by more than cfg.Tolerance means the machine is
//     busier now: the cached rounds stand, and only the trials are merged
//     (Agrees), so a loaded start cannot spoil a quiet probe;
//   - otherwise the new rounds are pooled with the cached ones (each size
//     keeps its latest maxRounds) and the model refitted on the pooled
//     medians (Agrees or Refined). The model never moves on minima.
//
// Trials always merge keeping the fastest (Grid.Merge), so the minima
// that judge the next start describe the quietest machine seen.
func Revalidate(cfg ProbeConfig, cached []Grid) (Revalidation, error) {
	cfg = cfg.withDefaults()
	if err := ValidateGrids(cached); err != nil {
		return Revalidation{}, fmt.Errorf("revalidate: %w", err)
	}
	start := cfg.Now()
	if !complete(cached) {
		return reprobe(cfg, cached, nil, true, "the cache holds too few trials or paired rounds", start)
	}
	if p := checkGrids(cached, cfg.Tolerance); len(p) > 0 {
		return reprobe(cfg, cached, nil, false, "the cached probe failed its checks: "+p[0], start)
	}
	old := FitMachine(cached)
	chk := make([]Grid, len(cached))
	for k, g := range cached {
		chk[k] = NewGrid(g.Dim, checkSizesFor(g, old.ByDim[k]), g.Workers)
	}
	one := cfg
	one.Attempts = 1
	if _, err := probeInto(one, chk); err != nil {
		return Revalidation{}, fmt.Errorf("revalidate: %w", err)
	}
	faster, slower := compareNow(cached, chk, cfg.Tolerance)
	if faster != "" {
		return reprobe(cfg, cached, chk, true, faster, start)
	}
	rv := Revalidation{Outcome: Agrees, Checked: chk}
	pooled := chk
	rv.Reason = "no cell ran faster or slower than cached by more than " + pct(cfg.Tolerance) + "; paired rounds pooled"
	if slower != "" {
		pooled = withoutRounds(chk)
		rv.Reason = "busier now (" + slower + "): the cached paired rounds stand"
	}
	rv.Result = fitted(cfg, mergeGrids(cached, pooled), 0, cfg.Now().Sub(start))
	if !rv.Result.Machine.Equal(old) {
		rv.Outcome = Refined
		rv.Reason = fmt.Sprintf("the pooled paired rounds changed the model from %v", old)
	}
	return rv, nil
}

// reprobe probes the whole grid again; the new rounds replace the cached
// ones and the check's (those of the probe alone are kept, latest last).
// Trials merge, the check's and, with keepCached, the cache's: a cache
// that failed its checks is not merged back, or one lucky trial in it
// (more than the tolerance below the next) would fail every later start.
func reprobe(cfg ProbeConfig, cached, chk []Grid, keepCached bool, why string, start time.Time) (Revalidation, error) {
	gs := make([]Grid, len(cached))
	for k, g := range cached {
		gs[k] = NewGrid(g.Dim, g.Sizes, g.Workers)
	}
	res, err := probeInto(cfg, gs)
	if err != nil {
		return Revalidation{}, fmt.Errorf("revalidate: re-probing: %w", err)
	}
	merged := mergeGrids(gs, withoutRounds(chk))
	if keepCached {
		merged = mergeGrids(merged, withoutRounds(cached))
	}
	return Revalidation{Outcome: Reprobed, Reason: why, Checked: chk,
		Result: fitted(cfg, merged, res.Attempts, cfg.Now().Sub(start))}, nil
}

func fitted(cfg ProbeConfig, gs []Grid, attempts int, cost time.Duration) ProbeResult {
	return ProbeResult{Machine: FitMachine(gs), Grids: gs, Problems: checkGrids(gs, cfg.Tolerance), Attempts: attempts, Cost: cost}
}

// mergeGrids merges into each grid of gs the grid of o of its dimension
// (Grid.Merge); gs is not changed.
func mergeGrids(gs, o []Grid) []Grid {
	out := make([]Grid, len(gs))
	for k, g := range gs {
		out[k] = g.withRounds(true)
		for _, og := range o {
			if og.Dim == g.Dim {
				out[k] = out[k].Merge(og)
			}
		}
	}
	return out
}

func withoutRounds(gs []Grid) []Grid {
	out := make([]Grid, len(gs))
	for k, g := range gs {
		out[k] = g.withRounds(false)
	}
	return out
}

// checkSizesFor picks the sizes Revalidate times at g's dimension: the
// largest, where the ceiling is decided, and for a model with more than
// one worker the sizes on either side of its crossover (where the count
// it decided starts: BytesPerWorker·2 for two workers).
func checkSizesFor(g Grid, m DimModel) []int64 {
	sizes := []int64{g.Sizes[len(g.Sizes)-1]}
	if m.MaxWorkers > 1 {
		cross := m.MinBytes // where parallelism starts
		if cross == 0 {
			cross = 2 * m.bytesPerWorker()
		}
		i, _ := slices.BinarySearch(g.Sizes, cross)
		for _, k := range []int{i - 1, i} {
			if k >= 0 && k < len(g.Sizes) {
				sizes = append(sizes, g.Sizes[k])
			}
		}
	}
	slices.Sort(sizes)
	return slices.Compact(sizes)
}

// compareNow names the cell of now whose fastest trial beats the cache's
// by the largest factor, if that factor exceeds 1/(1−tol), and the cell
// that lags it the most, if by more than 1+tol.
func compareNow(cached, now []Grid, tol float64) (faster, slower string) {
	lo, hi := 1-tol, 1+tol
	for k, ng := range now {
		cg := cached[k]
		for i, size := range ng.Sizes {
			for j, w := range ng.Workers {
				ci, cj, ok := cg.cell(size, w)
				if !ok {
					continue
				}
				r := ng.Min(i, j) / cg.Min(ci, cj)
				why := fmt.Sprintf("dim %d, %s with %d workers: %v now, %v cached", ng.Dim, sizeName(size), w, nsDur(ng.Min(i, j)), nsDur(cg.Min(ci, cj)))
				if r < lo {
					lo, faster = r, why
				}
				if r > hi {
					hi, slower = r, why
				}
			}
		}
	}
	return faster, slower
}

func nsDur(ns float64) time.Duration {
	return time.Duration(ns).Round(100 * time.Nanosecond)
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }
