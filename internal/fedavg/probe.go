package fedavg

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"
)

// ProbeVersion names the probe's method and the kernels it measures; a
// cached probe of another version is stale. Bump it when either changes.
// Version 3: paired rounds decide, per dimension.
const ProbeVersion = 3

// Trial times one trial: FedAvg over size bytes of input of dimension dim
// (size/(4·dim) clients) with workers workers, returning the ns per call.
// Probe injects the real one unless ProbeConfig.Trial is set (tests
// simulate machines with it).
type Trial func(dim int, size int64, workers int) (nsPerOp float64, err error)

// ProbeConfig paces Probe and Revalidate. Zero fields take the defaults
// named.
type ProbeConfig struct {
	// MaxWorkers bounds the worker counts tried: 1, 2, 4, … and
	// MaxWorkers itself; 0 means GOMAXPROCS.
	MaxWorkers int
	// Dims are the dimensions probed, ascending: Auto at another dim uses
	// the largest probed dim not above it (Machine.ForDim). By default
	// 4096 and 8192: two workers cut tiles of dim/8 coordinates, and
	// whether they pay at 8–16 MiB differs between the two.
	Dims []int
	// Sizes are the input sizes in bytes, ascending; by default 256 KiB
	// to 16 MiB in powers of two, the span of the micro matrix.
	Sizes []int64
	// Rounds is the number of paired rounds per attempt: each round times
	// every (dim, size) cell once, in an order rotated from round to
	// round, and at a cell every worker count twice in a palindrome;
	// 6 by default.
	Rounds int
	// MinTime is how long one trial runs the operation (after one
	// untimed call); 1ms by default.
	MinTime time.Duration
	// Attempts bounds the probe: when the grids fail their checks
	// (Grid.Check) another attempt adds Rounds more rounds to every cell,
	// up to Attempts in all; 3 by default.
	Attempts int
	// Tolerance is the relative tolerance of the checks and of
	// Revalidate; 0.10 by default.
	Tolerance float64
	// Now is the clock; time.Now by default.
	Now func() time.Time
	// Trial times one trial; nil means the real FedAvg.
	Trial Trial
}

func (c ProbeConfig) withDefaults() ProbeConfig {
	if c.MaxWorkers <= 0 {
		c.MaxWorkers = runtime.GOMAXPROCS(0)
	}
	if len(c.Dims) == 0 {
		c.Dims = []int{4096, 8192}
	}
	if len(c.Sizes) == 0 {
		for s := int64(256 << 10); s <= 16<<20; s *= 2 {
			c.Sizes = append(c.Sizes, s)
		}
	}
	if c.Rounds <= 0 {
		c.Rounds = 6
	}
	if c.MinTime <= 0 {
		c.MinTime = time.Millisecond
	}
	if c.Attempts <= 0 {
		c.Attempts = 3
	}
	if c.Tolerance <= 0 {
		c.Tolerance = 0.10
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// ProbeResult is a measured Machine and the evidence behind it.
type ProbeResult struct {
	Machine Machine
	Grids   []Grid // one per dimension, ascending
	// Problems are the grids' failed checks (Grid.Check) after the last
	// attempt; none when the probe is consistent.
	Problems []string
	Attempts int
	// Cost is the wall time the probe took.
	Cost time.Duration
}

// Consistent reports whether the probe passed its checks. A probe that
// did not is no evidence: callers fall back to the constant model.
func (r ProbeResult) Consistent() bool { return len(r.Problems) == 0 && complete(r.Grids) }

// Probe measures a Machine: FedAvg itself (the operation Auto serves, so
// its arithmetic counts as well as memory bandwidth) at every dimension
// of cfg.Dims over inputs of cfg.Sizes with 1, 2, 4, … MaxWorkers workers
// (powers of two keep the probe short on many cores), in paired rounds
// (measure). The grids are checked for self-consistency (Grid.Check) and
// re-probed, up to cfg.Attempts, while they fail. Each dimension's model
// rests on the median paired ratios (fitDim): more workers are chosen at
// a size only when they beat fewer by pairMargin there.
func Probe(cfg ProbeConfig) (ProbeResult, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Dims) > maxDims || len(cfg.Sizes) > maxSizes || !slices.IsSorted(cfg.Dims) {
		return ProbeResult{}, fmt.Errorf("probe: want at most %d ascending dims and %d sizes, have %v and %v", maxDims, maxSizes, cfg.Dims, cfg.Sizes)
	}
	gs := make([]Grid, len(cfg.Dims))
	for k, d := range cfg.Dims {
		gs[k] = NewGrid(d, cfg.Sizes, probeCounts(cfg.MaxWorkers))
	}
	if err := ValidateGrids(gs); err != nil {
		return ProbeResult{}, fmt.Errorf("probe: %w", err)
	}
	return probeInto(cfg, gs)
}

// probeInto adds attempts of rounds to gs until they are consistent or
// the attempts are spent.
func probeInto(cfg ProbeConfig, gs []Grid) (ProbeResult, error) {
	start := cfg.Now()
	trial, done, err := cfg.trial(gs)
	if err != nil {
		return ProbeResult{}, err
	}
	defer done()
	res := ProbeResult{Grids: gs}
	for res.Attempts < cfg.Attempts {
		res.Attempts++
		if err := measure(cfg, trial, gs); err != nil {
			return res, err
		}
		if res.Problems = checkGrids(gs, cfg.Tolerance); len(res.Problems) == 0 {
			break
		}
	}
	res.Machine = FitMachine(gs)
	res.Cost = cfg.Now().Sub(start)
	return res, nil
}

// ValidateGrids validates each grid (Grid.Validate) and that there are 1
// to maxDims of them, of ascending dimensions.
func ValidateGrids(gs []Grid) error {
	if len(gs) == 0 || len(gs) > maxDims {
		return fmt.Errorf("probe: %d grids, want 1 to %d", len(gs), maxDims)
	}
	for k, g := range gs {
		if err := g.Validate(); err != nil {
			return err
		}
		if k > 0 && g.Dim <= gs[k-1].Dim {
			return fmt.Errorf("probe: grid dims %d after %d must ascend", g.Dim, gs[k-1].Dim)
		}
		if !slices.Equal(g.Workers, gs[0].Workers) { // the real trial builds gs[0]'s aggregators
			return fmt.Errorf("probe: worker counts %v at dim %d, %v at dim %d: want one list", g.Workers, g.Dim, gs[0].Workers, gs[0].Dim)
		}
	}
	return nil
}

func checkGrids(gs []Grid, tol float64) []string {
	var p []string
	for _, g := range gs {
		p = append(p, g.Check(tol)...)
	}
	return p
}

func complete(gs []Grid) bool {
	for _, g := range gs {
		if !g.Complete() {
			return false
		}
	}
	return len(gs) > 0
}

// measure adds cfg.Rounds paired rounds to every size of every grid: a
// round visits every (dim, size) cell once, starting one cell further on
// than the round before, so that a burst of load hits every cell alike.
func measure(cfg ProbeConfig, trial Trial, gs []Grid) error {
	type cell struct{ k, i int }
	var cells []cell
	for k, g := range gs {
		for i := range g.Sizes {
			cells = append(cells, cell{k, i})
		}
	}
	for r := range cfg.Rounds {
		for n := range cells {
			c := cells[(n+r)%len(cells)]
			if err := pairedRound(trial, gs[c.k], c.i, r%2 == 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// pairedRound times every worker count twice at size i, back to back in
// a palindrome (ABBA: 1, 2, 2, 1; reversed, BAAB, when reverse), so that
// every count's two trials are centred on the same moment and a load
// that drifts linearly adds to all alike. It records every trial and the
// round: each count's mean.
func pairedRound(trial Trial, g Grid, i int, reverse bool) error {
	n := len(g.Workers)
	mean := make([]float64, n)
	for k := range 2 * n {
		j := k
		if k >= n {
			j = 2*n - 1 - k
		}
		if reverse {
			j = n - 1 - j
		}
		ns, err := trial(g.Dim, g.Sizes[i], g.Workers[j])
		if err != nil {
			return fmt.Errorf("probe at dim %d, %s with %d workers: %w", g.Dim, sizeName(g.Sizes[i]), g.Workers[j], err)
		}
		if !(ns > 0) || math.IsInf(ns, 0) {
			return fmt.Errorf("probe: trial at dim %d, %s with %d workers took %v ns", g.Dim, sizeName(g.Sizes[i]), g.Workers[j], ns)
		}
		g.add(i, j, ns)
		mean[j] += ns / 2
	}
	g.addRound(i, mean)
	return nil
}

// probeCounts is 1, 2, 4, … below max, then max.
func probeCounts(max int) []int {
	var c []int
	for w := 1; w < max; w *= 2 {
		c = append(c, w)
	}
	return append(c, max)
}
