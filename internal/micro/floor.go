package micro

import "sync"

// floor is the physical reference for aggregation: a plain parallel sum of
// the same bytes, split into the same number of contiguous chunks and run
// on the same kind of persistent worker pool as fedavg, so the gap between
// the two is the cost of the arithmetic, not of reading memory or of
// dispatch.
type floor struct {
	work    chan int
	wg      sync.WaitGroup
	started int
	data    []float32
	chunks  int
	sums    []float32
}

func newFloor() *floor { return &floor{work: make(chan int)} }

func (f *floor) close() { close(f.work) }

// sum returns the sum of data over w workers.
func (f *floor) sum(data []float32, w int) float32 {
	f.data, f.chunks = data, w
	if len(f.sums) < w {
		f.sums = make([]float32, w)
	}
	for f.started < w-1 {
		f.started++
		go f.loop()
	}
	for i := 1; i < w; i++ {
		f.wg.Add(1)
		f.work <- i
	}
	f.chunk(0)
	f.wg.Wait()
	var s float32
	for _, v := range f.sums[:w] {
		s += v
	}
	return s
}

func (f *floor) loop() {
	for i := range f.work {
		f.chunk(i)
		f.wg.Done()
	}
}

func (f *floor) chunk(i int) {
	size := (len(f.data) + f.chunks - 1) / f.chunks
	lo := min(i*size, len(f.data))
	hi := min(lo+size, len(f.data))
	f.sums[i] = sum8(f.data[lo:hi])
}

// sum8 sums v with eight independent accumulators, so the loop is limited
// by loads, not by the latency of one addition chain.
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
