package fedavg

import (
	"fmt"
	"math"
	"slices"
)

// Grid holds the trials of a probe at one dimension: the ns per FedAvg
// call at each input size and worker count, two kinds of evidence from
// the same trials.
//
//   - Trials: a cell's fastest trials (maxKept). On a shared machine noise
//     only ever adds time, so the fastest trials say how fast the machine
//     can be: they check the grid (Check) and tell a cache taken under load
//     from one taken on a quiet machine (Revalidate). They decide nothing
//     about worker counts: a single lucky trial moves a minimum.
//   - Rounds: paired rounds. In a round every worker count runs twice, in
//     a palindrome (1, 2, 2, 1), so each count's two trials are centred on
//     the same moment and load that drifts cancels from the ratio of any
//     two counts. The worker decision is the median of those paired ratios
//     (decide).
type Grid struct {
	Dim     int           `json:"dim"`     // the updates' dimension; clients = size/(4·dim)
	Sizes   []int64       `json:"sizes"`   // input bytes, ascending
	Workers []int         `json:"workers"` // worker counts, ascending, starting at 1
	Trials  [][][]float64 `json:"trials"`  // [size][worker]: ns/op of the fastest trials, ascending
	// Rounds is [size][round][worker]: the mean ns/op of each count's two
	// trials in one paired round, oldest round first, the latest maxRounds.
	Rounds [][][]float64 `json:"rounds"`
}

// Bounds of a Grid (a cached grid is outside input).
const (
	maxKept   = 8  // fastest trials kept per cell
	maxRounds = 16 // paired rounds kept per size
	minRounds = 3  // paired rounds a size needs to decide
	maxSizes  = 16
	maxCounts = 16
	maxDim    = 1 << 22
	// maxProbeBytes bounds a probe size: the real trial allocates the
	// largest size, so a hand-edited cache must not ask for more.
	maxProbeBytes = 1 << 30
	// maxProbeWorkers bounds a probed worker count (an Aggregator each).
	maxProbeWorkers = 4096
)

// NewGrid returns an empty grid over sizes and worker counts at dim.
func NewGrid(dim int, sizes []int64, workers []int) Grid {
	g := Grid{Dim: dim, Sizes: slices.Clone(sizes), Workers: slices.Clone(workers)}
	g.Trials = make([][][]float64, len(sizes))
	g.Rounds = make([][][]float64, len(sizes))
	for i := range g.Trials {
		g.Trials[i] = make([][]float64, len(workers))
	}
	return g
}

// Validate checks the shape and the bounds: a dimension, strictly
// ascending sizes of at least one client, strictly ascending worker
// counts from 1, a trial list per cell, rounds of one time per count, and
// positive finite times.
func (g Grid) Validate() error {
	if g.Dim <= 0 || g.Dim > maxDim || len(g.Sizes) == 0 || len(g.Sizes) > maxSizes ||
		len(g.Workers) == 0 || len(g.Workers) > maxCounts || g.Workers[0] != 1 {
		return fmt.Errorf("probe grid: want dim in [1, %d], 1 to %d sizes and 1 to %d worker counts starting at 1, have %d, %v and %v",
			maxDim, maxSizes, maxCounts, g.Dim, g.Sizes, g.Workers)
	}
	if err := checkSizes(g.Dim, g.Sizes); err != nil {
		return fmt.Errorf("probe grid: %w", err)
	}
	for k := 1; k < len(g.Workers); k++ {
		if g.Workers[k] <= g.Workers[k-1] || g.Workers[k] > maxProbeWorkers {
			return fmt.Errorf("probe grid: worker counts %v must ascend, at most %d", g.Workers, maxProbeWorkers)
		}
	}
	if len(g.Trials) != len(g.Sizes) || len(g.Rounds) != len(g.Sizes) {
		return fmt.Errorf("probe grid: %d trial rows and %d round rows for %d sizes", len(g.Trials), len(g.Rounds), len(g.Sizes))
	}
	for i := range g.Sizes {
		if err := g.validateSize(i); err != nil {
			return fmt.Errorf("probe grid at dim %d, %s: %w", g.Dim, sizeName(g.Sizes[i]), err)
		}
	}
	return nil
}

func (g Grid) validateSize(i int) error {
	if len(g.Trials[i]) != len(g.Workers) {
		return fmt.Errorf("%d cells for %d worker counts", len(g.Trials[i]), len(g.Workers))
	}
	if len(g.Rounds[i]) > maxRounds {
		return fmt.Errorf("%d paired rounds, at most %d", len(g.Rounds[i]), maxRounds)
	}
	for _, cell := range g.Trials[i] {
		if len(cell) > maxKept || !slices.IsSorted(cell) || !positive(cell) {
			return fmt.Errorf("trials %v: want at most %d positive times, ascending", cell, maxKept)
		}
	}
	for _, r := range g.Rounds[i] {
		if len(r) != len(g.Workers) || !positive(r) {
			return fmt.Errorf("paired round %v: want a positive time per worker count", r)
		}
	}
	return nil
}

func positive(ns []float64) bool {
	for _, v := range ns {
		if !(v > 0) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// checkSizes reports sizes that are not strictly ascending, below one
// client of dimension dim or above maxProbeBytes.
func checkSizes(dim int, sizes []int64) error {
	for k, s := range sizes {
		if s < int64(dim)*4 || s > maxProbeBytes || (k > 0 && s <= sizes[k-1]) {
			return fmt.Errorf("sizes %v must ascend, hold at least one client of dimension %d (%d bytes) and be at most %d bytes", sizes, dim, dim*4, maxProbeBytes)
		}
	}
	return nil
}

// add records one trial of cell (i, j).
func (g Grid) add(i, j int, ns float64) {
	c := append(g.Trials[i][j], ns)
	slices.Sort(c)
	g.Trials[i][j] = c[:min(len(c), maxKept)]
}

// addRound records one paired round at size i, dropping the oldest past
// maxRounds.
func (g Grid) addRound(i int, ns []float64) {
	r := append(g.Rounds[i], slices.Clone(ns))
	g.Rounds[i] = r[max(0, len(r)-maxRounds):]
}

// Min is the fastest trial of cell (i, j), NaN when it has none.
func (g Grid) Min(i, j int) float64 {
	if c := g.Trials[i][j]; len(c) > 0 {
		return c[0]
	}
	return math.NaN()
}

// Complete reports whether every cell has a trial and every size
// minRounds paired rounds.
func (g Grid) Complete() bool {
	for i, row := range g.Trials {
		if len(g.Rounds[i]) < minRounds {
			return false
		}
		for _, c := range row {
			if len(c) == 0 {
				return false
			}
		}
	}
	return len(g.Trials) > 0
}

// cell returns the indices of (size, workers) in g, or ok=false.
func (g Grid) cell(size int64, workers int) (i, j int, ok bool) {
	i, okI := slices.BinarySearch(g.Sizes, size)
	j, okJ := slices.BinarySearch(g.Workers, workers)
	return i, j, okI && okJ
}

// Merge returns a copy of g with the evidence of o (a grid of the same
// dimension; another is left out) added at the sizes both hold: every
// trial, of which a cell keeps the fastest (the quietest evidence wins,
// so a probe taken under load cannot overwrite one taken on a quiet
// machine, and a quiet one heals a loaded one), and, when both have the
// same worker counts, o's paired rounds after g's, of which a size keeps
// the latest.
func (g Grid) Merge(o Grid) Grid {
	out := g.withRounds(true)
	if o.Dim != g.Dim {
		return out
	}
	sameCounts := slices.Equal(o.Workers, g.Workers)
	for oi, size := range o.Sizes {
		i, ok := slices.BinarySearch(out.Sizes, size)
		if !ok {
			continue
		}
		for oj, w := range o.Workers {
			if j, ok := slices.BinarySearch(out.Workers, w); ok {
				for _, ns := range o.Trials[oi][oj] {
					out.add(i, j, ns)
				}
			}
		}
		if sameCounts {
			for _, r := range o.Rounds[oi] {
				out.addRound(i, r)
			}
		}
	}
	return out
}

// withRounds returns a deep copy of g, without its paired rounds unless
// keep.
func (g Grid) withRounds(keep bool) Grid {
	out := NewGrid(g.Dim, g.Sizes, g.Workers)
	for i := range g.Trials {
		for j := range g.Trials[i] {
			out.Trials[i][j] = slices.Clone(g.Trials[i][j])
		}
		if keep {
			for _, r := range g.Rounds[i] {
				out.addRound(i, r)
			}
		}
	}
	return out
}
