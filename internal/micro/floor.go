package micro

import "github.com/sagebench/sagebench/internal/fedavg"

// floor is the physical reference for aggregation: a plain parallel sum
// (AVX2 where available, see sumFloor) of the same bytes on the same kind of pool as fedavg (fedavg.Pool, with
// tiles claimed dynamically, about four per worker as fedavg cuts them),
// so the gap between the two is the cost of the arithmetic, not of reading
// memory or of dispatch. It reads the bytes contiguously; reading them in
// FedAvg's own pattern (eight rows at a time, 16 KiB runs at a stride of
// the dimension) was measured to cost the same at 1 and 16 MiB and more at
// 8 MiB (docs/micro.md, issue 29), so the contiguous floor is the stricter
// reference and is kept.
type floor struct {
	pool  *fedavg.Pool
	body  func(worker, tile int)
	data  []float32
	size  int // values per tile
	sums  []float32
	tiles int
}

func newFloor() *floor {
	f := &floor{pool: fedavg.NewPool()}
	f.body = func(_, t int) {
		lo := min(t*f.size, len(f.data))
		f.sums[t] = sumFloor(f.data[lo:min(lo+f.size, len(f.data))])
	}
	return f
}

func (f *floor) close() { f.pool.Close() }

// sum returns the sum of data over w workers.
func (f *floor) sum(data []float32, w int) float32 {
	f.tiles = 1
	if w > 1 {
		f.tiles = 4 * w
	}
	f.data, f.size = data, (len(data)+f.tiles-1)/f.tiles
	if len(f.sums) < f.tiles {
		f.sums = make([]float32, f.tiles)
	}
	f.pool.Run(w, f.tiles, f.body)
	var s float32
	for _, v := range f.sums[:f.tiles] {
		s += v
	}
	return s
}

// sum8 is the portable sum: eight independent accumulators, so the loop is
// limited by loads, not by the latency of one addition chain.
func sum8(v []float32) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(v) >= 8 {
		x := (*[8]float32)(v)
		s0 += x[0]
		s1 += x[1]
		s2 += x[2]
		s3 += x[3]
		s4 += x[4]
		s5 += x[5]
		s6 += x[6]
		s7 += x[7]
		v = v[8:]
	}
	for _, x := range v {
		s0 += x
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}
