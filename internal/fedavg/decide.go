package fedavg

import (
	"fmt"
	"math"
	"slices"
)

// pairMargin is how much faster, by the median paired ratio, more workers
// must be than fewer to be chosen. A gain below it is not worth deciding
// on: either choice is within 1/(1−pairMargin) = 1.03× of the other, and
// on a shared 2-vCPU VM the median of a probe's paired ratios moves by
// about that much from probe to probe.
const pairMargin = 0.03

// Ratio is the median over size i's paired rounds of t(Workers[b]) ÷
// t(Workers[a]), the times of one round: below 1 when b workers are
// faster than a. NaN when the size has no rounds.
func (g Grid) Ratio(i, a, b int) float64 {
	rs := g.Rounds[i]
	q := make([]float64, len(rs))
	for k, r := range rs {
		q[k] = r[b] / r[a]
	}
	return median(q)
}

// median of q (reordered); NaN when empty.
func median(q []float64) float64 {
	n := len(q)
	if n == 0 {
		return math.NaN()
	}
	slices.Sort(q)
	if n%2 == 1 {
		return q[n/2]
	}
	return (q[n/2-1] + q[n/2]) / 2
}

// decide returns the index in g.Workers of the count to use at size i:
// going up the counts, w replaces the best so far when its median paired
// ratio to it is below 1−pairMargin. Fewer workers win ties and sizes
// without rounds.
func (g Grid) decide(i int) int {
	best := 0
	for j := 1; j < len(g.Workers); j++ {
		if g.Ratio(i, best, j) < 1-pairMargin {
			best = j
		}
	}
	return best
}

// FitMachine turns grids (one per dimension, ascending) into a Machine
// with a model per dimension (fitDim).
func FitMachine(gs []Grid) Machine {
	m := Machine{ByDim: make([]DimModel, len(gs))}
	for k, g := range gs {
		m.ByDim[k] = fitDim(g)
	}
	return m
}

// fitDim turns one dimension's paired decisions into its model. The
// ceiling is the count decided at the largest size. Parallelism starts at
// the smallest size from which every larger size decided on more than one
// worker (a win that does not last is noise, not a crossover), and bytes
// per worker puts the count decided there exactly at that size: sizes
// below it get one worker (MinBytes). With one worker decided at the largest size,
// the model is one worker up to it.
func fitDim(g Grid) DimModel {
	last := len(g.Sizes) - 1
	best := make([]int, len(g.Sizes))
	for i := range best {
		best[i] = g.decide(i)
	}
	if best[last] == 0 {
		return DimModel{Dim: g.Dim, BytesPerWorker: g.Sizes[last], MaxWorkers: 1}
	}
	k := last
	for k > 0 && best[k-1] > 0 {
		k--
	}
	bpw := g.Sizes[k] / int64(g.Workers[best[k]])
	return DimModel{Dim: g.Dim, BytesPerWorker: max(bpw, int64(g.Dim)*4), MaxWorkers: g.Workers[best[last]], MinBytes: g.Sizes[k]}
}

// agreeFloor is the smallest difference between two trials that Check
// counts as disagreement: waking a helper thread alone costs microseconds,
// and no worker count is chosen on less.
const agreeFloor = 2e3 // ns

// Check tests the grid for self-consistency and returns what is wrong
// (nil when consistent), within the relative tolerance tol:
//   - every size has minRounds paired rounds to decide on;
//   - repeated trials agree: each cell's two fastest trials differ by at
//     most tol (or agreeFloor, whichever is larger: one lucky or unlucky
//     trial is not evidence);
//   - time grows with size, for every worker count;
//   - a speed-up never exceeds the worker count: t(1) ÷ t(w) <= w·(1+tol)
//     (a slower one-worker time is load, not parallelism).
func (g Grid) Check(tol float64) []string {
	var p []string
	for i, size := range g.Sizes {
		at := fmt.Sprintf("dim %d, %s", g.Dim, sizeName(size))
		if n := len(g.Rounds[i]); n < minRounds {
			p = append(p, fmt.Sprintf("%s: %d paired rounds, want %d", at, n, minRounds))
		}
		for j, w := range g.Workers {
			c := g.Trials[i][j]
			switch {
			case len(c) < 2:
				p = append(p, fmt.Sprintf("%s with %d workers: %d trials, want 2 that agree", at, w, len(c)))
			case c[1]-c[0] > max(tol*c[0], agreeFloor):
				p = append(p, fmt.Sprintf("%s with %d workers: the two fastest trials differ by %.0f%% (> %.0f%%)", at, w, 100*(c[1]/c[0]-1), 100*tol))
			}
			if i > 0 && !(g.Min(i, j) > g.Min(i-1, j)) {
				p = append(p, fmt.Sprintf("dim %d, %d workers: %s took %.0f ns, not more than %s's %.0f ns", g.Dim, w, sizeName(size), g.Min(i, j), sizeName(g.Sizes[i-1]), g.Min(i-1, j)))
			}
			if up := g.Min(i, 0) / g.Min(i, j); up > float64(w)*(1+tol) {
				p = append(p, fmt.Sprintf("%s: %d workers are %.2f× faster than one, more than %d× can be", at, w, up, w))
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
