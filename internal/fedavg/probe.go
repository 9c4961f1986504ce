package fedavg

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"
)

// ProbeConfig paces Probe. Zero fields take the defaults named.
type ProbeConfig struct {
	// MaxWorkers bounds the worker counts tried: 1, 2, 4, … and
	// MaxWorkers itself; 0 means GOMAXPROCS.
	MaxWorkers int
	// Sizes are the input sizes in bytes, ascending; by default 256 KiB
	// to 16 MiB in powers of two, the span of the micro matrix.
	Sizes []int64
	// Reps is the number of timed repetitions per size and worker count,
	// the fastest kept (noise on a shared machine only adds time); 5 by
	// default.
	Reps int
	// MinTime is how long one repetition runs the operation; 1ms by
	// default.
	MinTime time.Duration
	// Now is the clock; time.Now by default.
	Now func() time.Time
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
	if c.Reps <= 0 {
		c.Reps = 5
	}
	if c.MinTime <= 0 {
		c.MinTime = time.Millisecond
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// ProbeResult is a measured Machine and the evidence behind it.
type ProbeResult struct {
	Machine Machine
	Sizes   []int64
	// Workers are the worker counts tried, ascending, starting at 1.
	Workers []int
	// NsPerOp[i][j] is the fastest FedAvg time at Sizes[i] with
	// Workers[j] workers.
	NsPerOp [][]float64
	// Cost is the wall time the probe took.
	Cost time.Duration
}

// probeDim is the dimension of the probe's updates (the middle of the
// micro matrix); sizes vary the client count, as tiles depend on dim only.
const probeDim = 4096

// Probe measures a Machine: FedAvg itself (the operation Auto serves, so
// its arithmetic counts as well as memory bandwidth) over inputs of
// cfg.Sizes with 1, 2, 4, … MaxWorkers workers (powers of two keep the
// probe short on many cores). The worker ceiling is the largest
// count whose time at the largest size is at least 5 % below every
// smaller count's; bytes per worker is half the size at which two workers
// start to beat one (interpolated between the sizes tried). It allocates
// one input of the largest size.
func Probe(cfg ProbeConfig) (ProbeResult, error) {
	cfg = cfg.withDefaults()
	if !slices.IsSorted(cfg.Sizes) || cfg.Sizes[0] < probeDim*4 {
		return ProbeResult{}, fmt.Errorf("probe sizes %v must be ascending and at least %d bytes", cfg.Sizes, probeDim*4)
	}
	start := cfg.Now()
	clients := int(cfg.Sizes[len(cfg.Sizes)-1] / (probeDim * 4))
	flat := make([]float32, clients*probeDim)
	for i := range flat {
		flat[i] = float32(i%251) * 0.01
	}
	counts := probeCounts(cfg.MaxWorkers)
	aggs := make([]*Aggregator, len(counts))
	for i := range aggs {
		a, err := New(Config{Workers: counts[i]})
		if err != nil {
			return ProbeResult{}, err
		}
		defer a.Close()
		aggs[i] = a
	}
	res := ProbeResult{Sizes: cfg.Sizes, Workers: counts}
	for _, size := range cfg.Sizes {
		row, err := timeSize(cfg, aggs, rows(flat, int(size/(probeDim*4))))
		if err != nil {
			return res, err
		}
		res.NsPerOp = append(res.NsPerOp, row)
	}
	res.Machine = fitMachine(res.Sizes, counts, res.NsPerOp)
	res.Cost = cfg.Now().Sub(start)
	return res, nil
}

// timeSize times FedAvg of ups with each aggregator (one per worker
// count), interleaving the worker counts within every repetition so
// that load from elsewhere on the machine hits them alike; it keeps each
// count's fastest repetition, in ns per FedAvg.
func timeSize(cfg ProbeConfig, aggs []*Aggregator, ups [][]float32) ([]float64, error) {
	dst := make([]float32, probeDim)
	best := make([]float64, len(aggs))
	for _, a := range aggs {
		if err := a.FedAvg(dst, ups, nil); err != nil { // start the pool, warm the caches
			return nil, err
		}
	}
	for range cfg.Reps {
		for i, a := range aggs {
			ns, err := timeRep(cfg, a, dst, ups)
			if err != nil {
				return nil, err
			}
			if best[i] == 0 || ns < best[i] {
				best[i] = ns
			}
		}
	}
	return best, nil
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

// fitMachine turns probe times into a Machine (see Probe). With one size
// or one worker count the ceiling is 1 unless the data show otherwise.
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
