package fedavg

import (
	"fmt"
	"math"
	"slices"
)

// Grid holds the trials of a probe: the ns per FedAvg call of every timed
// trial at each input size and worker count. Only the fastest trials of a
// cell are kept (maxKept): on a shared machine noise only ever adds time,
// so the fastest trials are the evidence and the rest is load.
type Grid struct {
	Sizes   []int64       `json:"sizes"`   // input bytes, ascending
	Workers []int         `json:"workers"` // worker counts, ascending, starting at 1
	Trials  [][][]float64 `json:"trials"`  // [size][worker]: ns/op of the fastest trials, ascending
}

// maxKept is how many of a cell's fastest trials a Grid keeps.
const maxKept = 8

// NewGrid returns an empty grid over sizes and worker counts.
func NewGrid(sizes []int64, workers []int) Grid {
	g := Grid{Sizes: slices.Clone(sizes), Workers: slices.Clone(workers)}
	g.Trials = make([][][]float64, len(sizes))
	for i := range g.Trials {
		g.Trials[i] = make([][]float64, len(workers))
	}
	return g
}

// Validate checks the shape: ascending positive sizes, ascending worker
// counts from 1, a trial list per cell, and positive finite trials.
func (g Grid) Validate() error {
	if len(g.Sizes) == 0 || len(g.Workers) == 0 || g.Workers[0] != 1 {
		return fmt.Errorf("probe grid: want sizes and worker counts starting at 1, have %v and %v", g.Sizes, g.Workers)
	}
	if !slices.IsSorted(g.Sizes) || !slices.IsSorted(g.Workers) || g.Sizes[0] <= 0 {
		return fmt.Errorf("probe grid: sizes %v and workers %v must be positive and ascending", g.Sizes, g.Workers)
	}
	if len(g.Trials) != len(g.Sizes) {
		return fmt.Errorf("probe grid: %d trial rows for %d sizes", len(g.Trials), len(g.Sizes))
	}
	for i, row := range g.Trials {
		if len(row) != len(g.Workers) {
			return fmt.Errorf("probe grid: size %d has %d cells for %d worker counts", g.Sizes[i], len(row), len(g.Workers))
		}
		for _, cell := range row {
			for _, ns := range cell {
				if !(ns > 0) || math.IsInf(ns, 0) {
					return fmt.Errorf("probe grid: trial %v ns at size %d is not a positive time", ns, g.Sizes[i])
				}
			}
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

// Min is the fastest trial of cell (i, j), NaN when it has none.
func (g Grid) Min(i, j int) float64 {
	if c := g.Trials[i][j]; len(c) > 0 {
		return c[0]
	}
	return math.NaN()
}

// Mins is Min for every cell.
func (g Grid) Mins() [][]float64 {
	out := make([][]float64, len(g.Sizes))
	for i := range out {
		out[i] = make([]float64, len(g.Workers))
		for j := range out[i] {
			out[i][j] = g.Min(i, j)
		}
	}
	return out
}

// Complete reports whether every cell has at least one trial.
func (g Grid) Complete() bool {
	for _, row := range g.Trials {
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

// Merge returns a copy of g with the trials of o added at the cells both
// hold; cells of o that g lacks are left out. Merging probes taken at
// different times keeps the fastest trials of either: the quietest
// evidence wins, so a probe taken under load cannot overwrite one taken
// on a quiet machine, and a quiet one heals a loaded one.
func (g Grid) Merge(o Grid) Grid {
	out := NewGrid(g.Sizes, g.Workers)
	for i := range g.Trials {
		for j := range g.Trials[i] {
			out.Trials[i][j] = slices.Clone(g.Trials[i][j])
		}
	}
	for oi, size := range o.Sizes {
		for oj, w := range o.Workers {
			if i, j, ok := out.cell(size, w); ok {
				for _, ns := range o.Trials[oi][oj] {
					out.add(i, j, ns)
				}
			}
		}
	}
	return out
}

// agreeFloor is the smallest difference between two trials that Check
// counts as disagreement: waking a helper thread alone costs microseconds,
// and no worker count is chosen on less.
const agreeFloor = 2e3 // ns

// Check tests the grid for self-consistency and returns what is wrong
// (nil when consistent), within the relative tolerance tol:
//   - repeated trials agree: each cell's two fastest trials differ by at
//     most tol (or agreeFloor, whichever is larger: one lucky or unlucky
//     trial is not evidence);
//   - time grows with size, for every worker count;
//   - a speed-up never exceeds the worker count: t(1) ÷ t(w) <= w·(1+tol)
//     (a slower one-worker time is load, not parallelism).
func (g Grid) Check(tol float64) []string {
	var p []string
	for i, size := range g.Sizes {
		for j, w := range g.Workers {
			c := g.Trials[i][j]
			switch {
			case len(c) < 2:
				p = append(p, fmt.Sprintf("%s with %d workers: %d trials, want 2 that agree", sizeName(size), w, len(c)))
			case c[1]-c[0] > max(tol*c[0], agreeFloor):
				p = append(p, fmt.Sprintf("%s with %d workers: the two fastest trials differ by %.0f%% (> %.0f%%)", sizeName(size), w, 100*(c[1]/c[0]-1), 100*tol))
			}
			if i > 0 && !(g.Min(i, j) > g.Min(i-1, j)) {
				p = append(p, fmt.Sprintf("%d workers: %s took %.0f ns, not more than %s's %.0f ns", w, sizeName(size), g.Min(i, j), sizeName(g.Sizes[i-1]), g.Min(i-1, j)))
			}
			if up := g.Min(i, 0) / g.Min(i, j); up > float64(w)*(1+tol) {
				p = append(p, fmt.Sprintf("%s: %d workers are %.2f× faster than one, more than %d× can be", sizeName(size), w, up, w))
			}
		}
	}
	return p
}

// sizeName prints a byte count in KiB or MiB.
func sizeName(b int64) string {
	if b >= 1<<20 && b%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d KiB", b>>10)
}
