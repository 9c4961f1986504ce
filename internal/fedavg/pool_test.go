package fedavg

import (
	"sync/atomic"
	"testing"
)

func TestPoolRunsEveryTileOnceWithExclusiveWorkers(t *testing.T) {
	p := NewPool()
	defer p.Close()
	for round := range 300 {
		workers, tiles := 1+round%7, round%13
		calls := make([]atomic.Int32, tiles)
		busy := make([]atomic.Bool, workers)
		p.Run(workers, tiles, func(w, tile int) {
			if w < 0 || w >= workers || busy[w].Swap(true) {
				t.Errorf("round %d: worker %d out of range or used concurrently", round, w)
				return
			}
			calls[tile].Add(1)
			busy[w].Store(false)
		})
		for i := range calls {
			if n := calls[i].Load(); n != 1 {
				t.Fatalf("round %d (%d workers): tile %d ran %d times", round, workers, i, n)
			}
		}
	}
}
