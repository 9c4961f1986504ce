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
	// with the new trials merged in.
	Agrees Outcome = "agrees"
	// Refined: merging the cells measured now changed the model.
	Refined Outcome = "refined"
	// Reprobed: a cell ran faster now than the cache by more than the
	// tolerance (the cache was taken under load), or the cache held no
	// trials to compare, or failed its checks: the machine was probed
	// again and the new grid merged with the cached one.
	Reprobed Outcome = "reprobed"
)

// Revalidation is what Revalidate measured and decided.
type Revalidation struct {
	Outcome Outcome
	// Reason names the cell that decided, e.g. "16 MiB with 2 workers:
	// 210 µs now, 350 µs cached".
	Reason string
	// Checked holds the cells measured to decide.
	Checked Grid
	// Result is the probe to use from now on: the cached grid merged
	// with everything measured, refitted and rechecked.
	Result ProbeResult
}

// Revalidate checks a cached probe grid cheaply against the machine as it
// is now: it times a few cells (the largest size, and the sizes around
// the cached model's crossover, with every worker count) in cfg.Rounds
// interleaved rounds, once, and compares their fastest trials with the
// cache's. A cell faster now by more than cfg.Tolerance means the cache
// was measured under load: the whole grid is probed again. Every trial is
// merged into the cached grid (Grid.Merge keeps the fastest), so a probe
// taken while the machine was loaded heals, and a measurement taken while
// it is loaded cannot spoil a quiet one.
func Revalidate(cfg ProbeConfig, cached Grid) (Revalidation, error) {
	cfg = cfg.withDefaults()
	if err := cached.Validate(); err != nil {
		return Revalidation{}, err
	}
	if err := checkSizes(cached.Sizes); err != nil {
		return Revalidation{}, err
	}
	start := cfg.Now()
	old := FitMachine(cached)
	if !cached.Complete() {
		return reprobe(cfg, cached, Grid{}, "the cache holds no trials to compare", start)
	}
	if p := cached.Check(cfg.Tolerance); len(p) > 0 {
		return reprobe(cfg, cached, Grid{}, "the cached probe failed its checks: "+p[0], start)
	}
	chk := NewGrid(checkSizesFor(cached, old), cached.Workers)
	one := cfg
	one.Attempts = 1
	if _, err := probeInto(one, chk); err != nil {
		return Revalidation{}, err
	}
	if why, quieter := fasterNow(cached, chk, cfg.Tolerance); quieter {
		return reprobe(cfg, cached, chk, why, start)
	}
	merged := cached.Merge(chk)
	rv := Revalidation{Outcome: Agrees, Checked: chk, Result: fitted(cfg, merged, 0, cfg.Now().Sub(start))}
	rv.Reason = "no cell ran faster than cached by more than " + pct(cfg.Tolerance)
	if rv.Result.Machine != old {
		rv.Outcome = Refined
		rv.Reason = fmt.Sprintf("the merged trials changed the model from %v", old)
	}
	return rv, nil
}

// reprobe probes the whole grid again on top of the cached and checked
// trials.
func reprobe(cfg ProbeConfig, cached, chk Grid, why string, start time.Time) (Revalidation, error) {
	g := NewGrid(cached.Sizes, cached.Workers)
	res, err := probeInto(cfg, g)
	if err != nil {
		return Revalidation{}, err
	}
	merged := g.Merge(cached).Merge(chk)
	return Revalidation{Outcome: Reprobed, Reason: why, Checked: chk,
		Result: fitted(cfg, merged, res.Attempts, cfg.Now().Sub(start))}, nil
}

func fitted(cfg ProbeConfig, g Grid, attempts int, cost time.Duration) ProbeResult {
	return ProbeResult{Machine: FitMachine(g), Grid: g, Problems: g.Check(cfg.Tolerance), Attempts: attempts, Cost: cost}
}

// checkSizesFor picks the sizes Revalidate times: the largest, where the
// worker ceiling is decided, and for a model with more than one worker
// the sizes on either side of its crossover (twice the bytes per worker).
func checkSizesFor(g Grid, m Machine) []int64 {
	sizes := []int64{g.Sizes[len(g.Sizes)-1]}
	if m.MaxWorkers > 1 {
		cross := 2 * m.bytesPerWorker()
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

// fasterNow reports the cell of now whose fastest trial beats the
// cache's by the largest factor, if that factor exceeds 1/(1-tol).
func fasterNow(cached, now Grid, tol float64) (string, bool) {
	best, why := 1-tol, ""
	for i, size := range now.Sizes {
		for j, w := range now.Workers {
			ci, cj, ok := cached.cell(size, w)
			if !ok {
				continue
			}
			if r := now.Min(i, j) / cached.Min(ci, cj); r < best {
				best = r
				why = fmt.Sprintf("%s with %d workers: %v now, %v cached", sizeName(size), w, nsDur(now.Min(i, j)), nsDur(cached.Min(ci, cj)))
			}
		}
	}
	return why, why != ""
}

func nsDur(ns float64) time.Duration {
	return time.Duration(ns).Round(100 * time.Nanosecond)
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }
