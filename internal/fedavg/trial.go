package fedavg

import (
	"errors"
	"fmt"
	"time"
)

// trial returns cfg.Trial, or the real FedAvg trial over gs's sizes,
// dimensions and worker counts with the function that releases it.
func (c ProbeConfig) trial(gs []Grid) (Trial, func(), error) {
	if c.Trial != nil {
		return c.Trial, func() {}, nil
	}
	var maxSize int64
	var maxDim int
	for _, g := range gs {
		maxSize = max(maxSize, g.Sizes[len(g.Sizes)-1])
		maxDim = max(maxDim, g.Dim)
	}
	return fedavgTrial(c, maxSize, maxDim, gs[0].Workers)
}

// fedavgTrial is the real Trial: FedAvg of size/(4·dim) clients of
// dimension dim with an Aggregator per worker count. It allocates one
// input of maxSize, of which every shape is a prefix.
func fedavgTrial(cfg ProbeConfig, maxSize int64, maxDim int, counts []int) (Trial, func(), error) {
	flat := make([]float32, maxSize/4)
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
			return nil, nil, fmt.Errorf("probe: an aggregator of %d workers: %w", w, err)
		}
		aggs[w] = a
	}
	dst := make([]float32, maxDim)
	trial := func(dim int, size int64, workers int) (float64, error) {
		a := aggs[workers]
		if a == nil || dim <= 0 || dim > maxDim || size > maxSize || size < int64(dim)*4 {
			return 0, fmt.Errorf("probe: no trial of %d bytes at dim %d with %d workers", size, dim, workers)
		}
		ups := rows(flat, int(size/(int64(dim)*4)), dim)
		if err := a.FedAvg(dst[:dim], ups, nil); err != nil { // start the pool, warm the caches
			return 0, err
		}
		return timeRep(cfg, a, dst[:dim], ups)
	}
	return trial, done, nil
}

func rows(flat []float32, n, dim int) [][]float32 {
	ups := make([][]float32, n)
	for i := range ups {
		ups[i] = flat[i*dim : (i+1)*dim]
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
