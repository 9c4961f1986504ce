package fedavg

import (
	"fmt"
	"runtime"
)

// Machine is a model of the machine for Auto worker counts: each worker
// needs BytesPerWorker bytes of input (clients·dim·4) before it pays for
// its dispatch, and more than MaxWorkers workers no longer add speed. The
// zero Machine is the fallback calibrated on a 2-vCPU VM
// (autoMinBytesPerWorker, at most GOMAXPROCS workers); Probe measures a
// Machine on the machine it runs on.
type Machine struct {
	BytesPerWorker int64 `json:"bytes_per_worker"` // 0 means autoMinBytesPerWorker
	MaxWorkers     int   `json:"max_workers"`      // 0 means GOMAXPROCS
}

// Validate reports a negative field.
func (m Machine) Validate() error {
	if m.BytesPerWorker < 0 || m.MaxWorkers < 0 {
		return inputErr(ErrParam, -1, -1, "machine %+v: bytes per worker and max workers must be >= 0 (0 takes the fallback)", m)
	}
	return nil
}

func (m Machine) String() string {
	return fmt.Sprintf("%d bytes per worker, at most %d workers", m.bytesPerWorker(), m.maxWorkers())
}

func (m Machine) bytesPerWorker() int64 {
	if m.BytesPerWorker > 0 {
		return m.BytesPerWorker
	}
	return autoMinBytesPerWorker
}

// maxWorkers is the ceiling, never above the current GOMAXPROCS.
func (m Machine) maxWorkers() int {
	p := runtime.GOMAXPROCS(0)
	if m.MaxWorkers > 0 {
		return min(m.MaxWorkers, p)
	}
	return p
}

// Workers returns the number of workers to use for clients updates of
// dimension dim. A requested count > 0 is explicit and is clamped to
// [1, clients]; requested <= 0 (Auto) picks one worker per whole
// BytesPerWorker of input, at least 1, at most the ceiling, GOMAXPROCS
// and clients.
func (m Machine) Workers(clients, dim, requested int) int {
	clients = max(clients, 1)
	if requested > 0 {
		return min(requested, clients)
	}
	bytes := int64(clients) * int64(max(dim, 0)) * 4
	w := bytes / m.bytesPerWorker()
	w = min(w, int64(m.maxWorkers()), int64(clients))
	return int(max(w, 1))
}
