package fedavg

import "runtime"

// Auto is the Workers value that lets ResolveWorkers choose.
const Auto = 0

// autoMinBytesPerWorker is the smallest input (clients·dim·4 bytes) that
// earns one more worker under Auto. Below it, handing a block to another
// goroutine (a channel hand-off and a wake-up, a few microseconds) costs
// more than the block saves. Chosen from BenchmarkAggregate on a 2-core
// AMD EPYC (Zen 5) VM: see docs/micro.md for the measurements.
const autoMinBytesPerWorker = 512 << 10

// ResolveWorkers returns the number of workers to use for clients updates
// of dimension dim. A requested count > 0 is explicit and is clamped to
// [1, clients]; requested <= 0 (Auto) picks 1 for inputs below
// autoMinBytesPerWorker and otherwise one worker per autoMinBytesPerWorker
// of input, at most GOMAXPROCS and at most clients. It keeps no state: the
// same arguments and GOMAXPROCS always give the same answer.
func ResolveWorkers(clients, dim, requested int) int {
	clients = max(clients, 1)
	if requested > 0 {
		return min(requested, clients)
	}
	bytes := int64(clients) * int64(max(dim, 0)) * 4
	w := bytes / autoMinBytesPerWorker
	w = min(w, int64(runtime.GOMAXPROCS(0)), int64(clients))
	return int(max(w, 1))
}

// span is a half-open range of coordinates [lo, hi).
type span struct{ lo, hi int }

// blockAlign keeps block boundaries on 64-byte lines of float32 so workers
// never write the same cache line of dst.
const blockAlign = 16

// splitBlocks fills out with w contiguous coordinate blocks covering
// [0, dim); trailing blocks may be empty when dim is small.
func splitBlocks(out []span, dim, w int) []span {
	out = out[:0]
	size := (dim + w - 1) / w
	size = (size + blockAlign - 1) / blockAlign * blockAlign
	for i := 0; i < w; i++ {
		lo := min(i*size, dim)
		hi := min(lo+size, dim)
		out = append(out, span{lo, hi})
	}
	return out
}
