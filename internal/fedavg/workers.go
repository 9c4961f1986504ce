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

// Tiling: coordinates are cut into contiguous tiles that workers claim
// one at a time. With several workers a tile is about a quarter of an even
// share (at least minTile, at most maxTile coordinates), so a late or
// descheduled worker leaves little for the others; alone, a worker takes
// maxTile coordinates at a time. Tile starts are multiples of 16 float32
// (64-byte lines), so two workers never write the same line of dst.
const (
	minTile    = 256
	maxTile    = 1024
	blockAlign = 16
)

// tileLen returns the tile length for dim coordinates over w workers.
func tileLen(dim, w int) int {
	if w <= 1 {
		return maxTile
	}
	t := (dim + 4*w - 1) / (4 * w)
	t = (t + blockAlign - 1) / blockAlign * blockAlign
	return min(max(t, minTile), maxTile)
}
