package fedavg

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"
)

// ProbeVersion names the probe's method and the kernels it measures; a
// cached probe of another version is stale. Bump it when either changes.
const ProbeVersion = 2

// Trial times one trial: FedAvg over size bytes of input with workers
// workers, returning the ns per call. Probe injects the real one unless
// ProbeConfig.Trial is set (tests simulate machines with it).
type Trial func(size int64, workers int) (nsPerOp float64, err error)

// ProbeConfig paces Probe and Revalidate. Zero fields take the defaults
// named.
type ProbeConfig struct {
	// MaxWorkers bounds the worker counts tried: 1, 2, 4, … and
	// MaxWorkers itself; 0 means GOMAXPROCS.
	MaxWorkers int
	// Sizes are the input sizes in bytes, ascending; by default 256 KiB
	// to 16 MiB in powers of two, the span of the micro matrix.
	Sizes []int64
	// Rounds is the number of interleaved rounds per attempt: each round
	// times every size with every worker count once, in an order rotated
	// from round to round, so that load from elsewhere on the machine
	// hits every cell alike; 5 by default.
	Rounds int
	// MinTime is how long one trial runs the operation (after one
	// untimed call); 1ms by default.
	MinTime time.Duration
	// Attempts bounds the probe: when the grid fails its checks
	// (Grid.Check) another attempt adds Rounds more trials to every cell,
	// up to Attempts in all; 4 by default.
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
	if len(c.Sizes) == 0 {
		for s := int64(256 << 10); s <= 16<<20; s *= 2 {
			c.Sizes = append(c.Sizes, s)
		}
	}
	if c.Rounds <= 0 {
		c.Rounds = 5
	}
	if c.MinTime <= 0 {
		c.MinTime = time.Millisecond
	}
	if c.Attempts <= 0 {
		c.Attempts = 4
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
	Grid    Grid
	// Problems are the grid's failed checks (Grid.Check) after the last
	// attempt; none when the probe is consistent.
	Problems []string
	Attempts int
	// Cost is the wall time the probe took.
	Cost time.Duration
}

// Consistent reports whether the probe passed its checks. A probe that
// did not is no evidence: callers fall back to the constant model.
func (r ProbeResult) Consistent() bool { return len(r.Problems) == 0 && r.Grid.Complete() }

// probeDim is the dimension of the probe's updates (the middle of the
// micro matrix); sizes vary the client count, as tiles depend on dim only.
const probeDim = 4096

// Probe measures a Machine: FedAvg itself (the operation Auto serves, so
// its arithmetic counts as well as memory bandwidth) over inputs of
// cfg.Sizes with 1, 2, 4, … MaxWorkers workers (powers of two keep the
// probe short on many cores). Every cell keeps its fastest trials; the
// grid is checked for self-consistency (Grid.Check) and re-probed, up to
// cfg.Attempts, while it fails. The worker ceiling is the largest count
// whose fastest time at the largest size is at least 5 % below every
// smaller count's; bytes per worker is half the size at which two workers
// start to beat one (interpolated between the sizes tried).
func Probe(cfg ProbeConfig) (ProbeResult, error) {
	cfg = cfg.withDefaults()
	if err := checkSizes(cfg.Sizes); err != nil {
		return ProbeResult{}, err
	}
	return probeInto(cfg, NewGrid(cfg.Sizes, probeCounts(cfg.MaxWorkers)))
}

// probeInto adds attempts of trials to g until it is consistent or the
// attempts are spent.
func probeInto(cfg ProbeConfig, g Grid) (ProbeResult, error) {
	start := cfg.Now()
	trial, done, err := cfg.trial(g)
	if err != nil {
		return ProbeResult{}, err
	}
	defer done()
	res := ProbeResult{Grid: g}
	for res.Attempts < cfg.Attempts {
		res.Attempts++
		if err := measure(cfg, trial, g); err != nil {
			return res, err
		}
		if res.Problems = g.Check(cfg.Tolerance); len(res.Problems) == 0 {
			break
		}
	}
	res.Machine = FitMachine(g)
	res.Cost = cfg.Now().Sub(start)
	return res, nil
}

func checkSizes(sizes []int64) error {
	if !slices.IsSorted(sizes) || sizes[0] < probeDim*4 {
		return fmt.Errorf("probe sizes %v must be ascending and at least %d bytes", sizes, probeDim*4)
	}
	return nil
}

// trial returns cfg.Trial, or the real FedAvg trial over g's sizes and
// worker counts with the function that releases it.
func (c ProbeConfig) trial(g Grid) (Trial, func(), error) {
	if c.Trial != nil {
		return c.Trial, func() {}, nil
	}
	return fedavgTrial(c, g.Sizes[len(g.Sizes)-1], g.Workers)
}

// measure adds cfg.Rounds trials to every cell of g, interleaved: each
// round visits every cell once, starting one cell further on than the
// round before.
func measure(cfg ProbeConfig, trial Trial, g Grid) error {
	cells := len(g.Sizes) * len(g.Workers)
	for r := range cfg.Rounds {
		for k := range cells {
			c := (k + r) % cells
			i, j := c/len(g.Workers), c%len(g.Workers)
			ns, err := trial(g.Sizes[i], g.Workers[j])
			if err != nil {
				return err
			}
			if !(ns > 0) {
				return fmt.Errorf("probe: trial at %s with %d workers took %v ns", sizeName(g.Sizes[i]), g.Workers[j], ns)
			}
			g.add(i, j, ns)
		}
	}
	return nil
}

// fedavgTrial is the real Trial: FedAvg of size/16 KiB clients of
// dimension probeDim with an Aggregator per worker count. It allocates
// one input of maxSize.
func fedavgTrial(cfg ProbeConfig, maxSize int64, counts []int) (Trial, func(), error) {
	if maxSize < probeDim*4 {
		return nil, nil, fmt.Errorf("probe size %d below one client of dimension %d", maxSize, probeDim)
	}
	flat := make([]float32, maxSize/4/probeDim*probeDim)
	for i := range flat {
		flat[i] = float32(i%251) * 0.01
	}
	aggs := map[int]*Aggregator{}
	done := func() {
		for _, a := range aggs {
			a.Close()
		}
	}
	for _, w := range counts {
		a, err := New(Config{Workers: w})
		if err != nil {
			done()
			return nil, nil, err
		}
		aggs[w] = a
	}
	dst := make([]float32, probeDim)
	trial := func(size int64, workers int) (float64, error) {
		a := aggs[workers]
		if a == nil {
			return 0, fmt.Errorf("probe: no aggregator for %d workers", workers)
		}
		ups := rows(flat, int(size/(probeDim*4)))
		if err := a.FedAvg(dst, ups, nil); err != nil { // start the pool, warm the caches
			return 0, err
		}
		return timeRep(cfg, a, dst, ups)
	}
	return trial, done, nil
}

// probeCounts is 1, 2, 4, … below max, then max.
func probeCounts(max int) []int {
	var c []int
	for w := 1; w < max; w *= 2 {
		c = append(c, w)
	}
	return append(c, max)
}

func rows(flat []float32, n int) [][]float32 {
	ups := make([][]float32, n)
	for i := range ups {
		ups[i] = flat[i*probeDim : (i+1)*probeDim]
	}
	return ups
}

// timeRep runs FedAvg until cfg.MinTime has passed and returns the ns
// per call.
func timeRep(cfg ProbeConfig, a *Aggregator, dst []float32, ups [][]float32) (float64, error) {
	n, t0 := 0, cfg.Now()
	var el time.Duration
	for el < cfg.MinTime {
		if err := a.FedAvg(dst, ups, nil); err != nil {
			return 0, err
		}
		n++
		el = cfg.Now().Sub(t0)
	}
	if el <= 0 {
		return 0, errors.New("probe: the clock did not advance")
	}
	return float64(el.Nanoseconds()) / float64(n), nil
}

// FitMachine turns a grid's fastest times into a Machine (see Probe).
// With one size or one worker count the ceiling is 1 unless the data
// show otherwise.
func FitMachine(g Grid) Machine { return fitMachine(g.Sizes, g.Workers, g.Mins()) }

// fitMachine turns probe times into a Machine (see Probe).
func fitMachine(sizes []int64, counts []int, ns [][]float64) Machine {
	last := ns[len(ns)-1]
	ceiling, best := 1, last[0]
	for j := 1; j < len(counts); j++ {
		if last[j] < 0.95*best {
			ceiling, best = counts[j], last[j]
		}
	}
	if ceiling == 1 {
		return Machine{BytesPerWorker: sizes[len(sizes)-1], MaxWorkers: 1}
	}
	if last[1] >= last[0] {
		// Only more than two workers pay, even at the largest size (e.g.
		// two workers on one core's hyper-threads): give the ceiling
		// there, not the two workers a crossover of one and two would.
		return Machine{BytesPerWorker: max(sizes[len(sizes)-1]/int64(ceiling), probeDim*4), MaxWorkers: ceiling}
	}
	return Machine{BytesPerWorker: max(crossover(sizes, ns)/2, probeDim*4), MaxWorkers: ceiling}
}

// crossover is the size at which two workers start to beat one for good:
// past the last size where one worker is at least as fast, interpolated
// linearly in the time difference.
func crossover(sizes []int64, ns [][]float64) int64 {
	gain := func(i int) float64 { return ns[i][0] - ns[i][1] } // > 0: two workers win
	k := len(sizes) - 1
	if gain(k) <= 0 {
		return sizes[k] // only more than two workers win, at the largest size
	}
	for k > 0 && gain(k-1) > 0 {
		k--
	}
	if k == 0 {
		return sizes[0]
	}
	g0, g1 := gain(k-1), gain(k)
	frac := -g0 / (g1 - g0)
	return sizes[k-1] + int64(frac*float64(sizes[k]-sizes[k-1]))
}
