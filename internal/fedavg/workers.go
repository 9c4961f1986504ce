package fedavg

// Auto is the Workers value that lets ResolveWorkers choose.
const Auto = 0

// autoMinBytesPerWorker is the input (clients·dim·4 bytes) each worker
// must have under Auto. Measured side by side on the 2-vCPU AMD EPYC
// (Zen 5) VM this project runs on, with the final (AVX-512) kernel, 10
// interleaved repetitions of 200 ms on an otherwise idle machine
// (benchstat, bench/micro/run.sh): at 512×8192 (16 MiB) two workers
// took 334.5 µs ± 13 % against one worker's 413.5 µs ± 6 % (−19 %,
// p = 0.000); at 256×8192 (8 MiB) two workers were no faster (170.4 µs
// vs 163.3 µs, p = 0.089) and cost 38 % more CPU. So a second worker
// needs 8 MiB each: 1 worker up to 8 MiB, 2 at 16 MiB (docs/micro.md).
const autoMinBytesPerWorker = 8 << 20

// ResolveWorkers returns the number of workers to use for clients updates
// of dimension dim under the fallback model (the zero Machine): a
// requested count > 0 is explicit and is clamped to [1, clients];
// requested <= 0 (Auto) picks one worker per whole autoMinBytesPerWorker
// of input (so 1 below twice that), at least 1, at most GOMAXPROCS and at
// most clients. It keeps no state: the same arguments and GOMAXPROCS
// always give the same answer.
func ResolveWorkers(clients, dim, requested int) int {
	return Machine{}.Workers(clients, dim, requested)
}

// Tiling: coordinates are cut into contiguous tiles that workers claim
// one at a time. Alone, a worker takes maxTile coordinates at a time, so
// each client row is read in long 16 KiB runs (hardware prefetch restarts
// less often than with 4 KiB tiles) while the 32 KiB float64 partial buffer
// still fits L1; 1024, 2048, 4096 and 8192 were measured side by side and
// 4096 was fastest, within the noise of a shared machine. With several workers a tile is about a
// quarter of an even share (at least minTile), so a late or descheduled
// worker leaves little for the others. Tile starts are multiples of 16
// float32 (64-byte lines), so two workers never write the same line of dst.
const (
	minTile    = 256
	maxTile    = 4096
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
