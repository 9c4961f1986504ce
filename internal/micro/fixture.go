package micro

import (
	"github.com/sagebench/sagebench/internal/fedavg"
	"math/rand/v2"
	"sync"
)

// Matrix sizes of the aggregation surface.
var (
	aggClients = []int{32, 128, 256, 512}
	aggDims    = []int{2048, 4096, 8192}
	aggWorkers = []int{1, 2, 4, 8, 0} // 0 = auto
	codecDims  = []int{512, 2048, 8192, 16384}
)

// fixture lazily builds one contiguous matrix of the largest shape; every
// smaller shape is a prefix of it, reshaped, so all cases and the memory
// floor read the same bytes and no case pays for generating data.
type fixture struct {
	once sync.Once
	flat []float32

	// resolve gives the probe of workers=auto, once (nil: the fallback).
	resolve   func() ProbeInfo
	mOnce     sync.Once
	mResolved ProbeInfo
}

// probe is the probe workers=auto cases run with, resolved on first use.
func (f *fixture) probe() ProbeInfo {
	f.mOnce.Do(func() {
		f.mResolved = ProbeInfo{Source: SourceFallback, Why: "no probe"}
		if f.resolve != nil {
			f.mResolved = f.resolve()
		}
	})
	return f.mResolved
}

// machine is the Machine workers=auto cases run with.
func (f *fixture) machine() fedavg.Machine { return f.probe().Machine }

func (f *fixture) data() []float32 {
	f.once.Do(func() {
		n := aggClients[len(aggClients)-1] * aggDims[len(aggDims)-1]
		f.flat = randomFloats(n, 1)
	})
	return f.flat
}

// updates returns clients rows of length dim over a contiguous prefix.
func (f *fixture) updates(clients, dim int) [][]float32 {
	flat := f.data()[:clients*dim]
	rows := make([][]float32, clients)
	for i := range rows {
		rows[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return rows
}

// weights returns deterministic sample counts in [1, 1000].
func weights(n int) []float64 {
	r := rand.New(rand.NewPCG(2, 2))
	w := make([]float64, n)
	for i := range w {
		w[i] = float64(1 + r.IntN(1000))
	}
	return w
}

// randomFloats returns n gradient-like values, normal with sd 0.05.
func randomFloats(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, seed))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * 0.05)
	}
	return v
}
