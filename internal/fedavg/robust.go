package fedavg

import (
	"cmp"
	"math"
	"slices"
)

// Median writes into dst the coordinate-wise median of updates (the mean
// of the two middle values when len(updates) is even), then clips it if the
// Aggregator has a ClipNorm. Weights do not apply.
func (a *Aggregator) Median(dst []float32, updates [][]float32) error {
	return a.columnwise(dst, updates, 0, false)
}

// TrimmedMean writes into dst the coordinate-wise mean of updates after
// dropping the trim smallest and trim largest values of each coordinate,
// then clips it. trim must satisfy 0 <= 2·trim < len(updates).
func (a *Aggregator) TrimmedMean(dst []float32, updates [][]float32, trim int) error {
	if trim < 0 || 2*trim >= len(updates) && len(updates) > 0 {
		return inputErr(ErrParam, -1, -1, "trim %d must satisfy 0 <= 2·trim < %d clients", trim, len(updates))
	}
	return a.columnwise(dst, updates, trim, true)
}

// columnwise runs a per-coordinate order statistic over worker blocks.
func (a *Aggregator) columnwise(dst []float32, updates [][]float32, trim int, mean bool) error {
	e := a.engine
	e.mu.Lock()
	defer e.mu.Unlock()
	dim, err := checkShape(dst, updates)
	if err != nil {
		return err
	}
	workers, tiles := e.prepare(dst, updates, dim)
	e.trim = trim
	if mean {
		e.exec(workers, tiles, trimmedTile)
	} else {
		e.exec(workers, tiles, medianTile)
	}
	err = e.finish(dst, updates)
	e.release()
	return err
}

// gather copies coordinate j of every update into col; it reports false on
// a non-finite value.
func gather(col []float32, updates [][]float32, j int) bool {
	ok := true
	for c, u := range updates {
		v := u[j]
		ok = ok && v-v == 0
		col[c] = v
	}
	return ok
}

func medianTile(e *engine, w, tile int) {
	orderTile(e, w, tile, func(col []float32) float64 {
		n := len(col)
		if n%2 == 1 {
			return float64(col[n/2])
		}
		return (float64(col[n/2-1]) + float64(col[n/2])) / 2
	})
}

func trimmedTile(e *engine, w, tile int) {
	k := e.trim
	orderTile(e, w, tile, func(col []float32) float64 {
		s := 0.0
		for _, v := range col[k : len(col)-k] {
			s += float64(v)
		}
		return s / float64(len(col)-2*k)
	})
}

// orderTile sorts each coordinate of a tile across clients (in worker w's
// column buffer) and writes stat(sorted column).
func orderTile(e *engine, w, tile int, stat func([]float32) float64) {
	lo, hi := e.span(tile)
	col := e.col[w]
	bad := -1
	for j := lo; j < hi; j++ {
		if !gather(col, e.updates, j) {
			if bad < 0 {
				bad = j
			}
			continue
		}
		slices.Sort(col)
		f := float32(stat(col))
		e.dst[j] = f
	}
	e.bad[tile] = bad
}

// MultiKrum selects the m updates with the lowest Krum scores and writes
// their weighted mean (weights nil: equal) into dst, then clips it. The
// score of update i is the sum of squared L2 distances to its n−f−2
// nearest other updates; it needs n > 2f+2 and 1 <= m <= n−f (m = 1 is
// Krum). Distances are computed in float64, so finite float32 inputs cannot
// overflow them; NaN or ±Inf in any update is an ErrNonFinite error.
// It returns the selected client indices in ascending score order.
func (a *Aggregator) MultiKrum(dst []float32, updates [][]float32, weights []float64, f, m int) ([]int, error) {
	n := len(updates)
	if f < 0 || n <= 2*f+2 {
		return nil, inputErr(ErrParam, -1, -1, "multi-krum with f=%d needs more than 2f+2=%d clients, have %d", f, 2*f+2, n)
	}
	if m < 1 || m > n-f {
		return nil, inputErr(ErrParam, -1, -1, "multi-krum selects m=%d, want 1 <= m <= n-f = %d", m, n-f)
	}
	if err := checkWeights(weights, n); err != nil {
		return nil, err
	}
	if _, err := checkShape(dst, updates); err != nil {
		return nil, err
	}
	if err := scanNonFinite(updates); err != nil {
		return nil, err
	}
	scores := a.krumScores(updates, f)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(scores[x], scores[y]) })
	sel := order[:m]
	chosen := make([][]float32, m)
	var wsel []float64
	if weights != nil {
		wsel = make([]float64, m)
	}
	for i, c := range sel {
		chosen[i] = updates[c]
		if weights != nil {
			wsel[i] = weights[c]
		}
	}
	if err := a.FedAvg(dst, chosen, wsel); err != nil {
		return nil, err
	}
	return sel, nil
}

// krumScores fills the pairwise distance matrix in parallel (one tile per
// row, claimed dynamically, which balances the triangle) and returns each
// update's score.
func (a *Aggregator) krumScores(updates [][]float32, f int) []float64 {
	e := a.engine
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(updates)
	if cap(e.dist) < n*n {
		e.dist = make([]float64, n*n)
	}
	e.dist = e.dist[:n*n]
	e.updates = updates
	e.exec(e.workers(n, len(updates[0])*n/2), n, distanceRow)
	e.release()
	scores := make([]float64, n)
	row := make([]float64, 0, n-1)
	for i := range n {
		row = row[:0]
		for k := range n {
			if k != i {
				row = append(row, e.dist[min(i, k)*n+max(i, k)])
			}
		}
		slices.Sort(row)
		for _, d := range row[:n-f-2] {
			scores[i] += d
		}
	}
	return scores
}

func distanceRow(e *engine, _, i int) {
	n := len(e.updates)
	for k := i + 1; k < n; k++ {
		e.dist[i*n+k] = sqDist(e.updates[i], e.updates[k])
	}
}

// sqDist is the squared L2 distance in float64 (no float32 overflow).
func sqDist(x, y []float32) float64 {
	y = y[:len(x)]
	var s0, s1 float64
	i := 0
	for ; i+1 < len(x); i += 2 {
		d0 := float64(x[i]) - float64(y[i])
		d1 := float64(x[i+1]) - float64(y[i+1])
		s0 += d0 * d0
		s1 += d1 * d1
	}
	if i < len(x) {
		d := float64(x[i]) - float64(y[i])
		s0 += d * d
	}
	s := s0 + s1
	if math.IsInf(s, 0) { // only from values near MaxFloat32 in huge dims
		return math.MaxFloat64
	}
	return s
}
