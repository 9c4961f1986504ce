package fedavg

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// Machine is a model of the machine for Auto worker counts: each worker
// needs BytesPerWorker bytes of input (clients·dim·4) before it pays for
// its dispatch, and more than MaxWorkers workers no longer add speed. A
// probed Machine holds that pair per probed dimension (ByDim), because
// whether a second worker pays depends on the dimension as well as the
// bytes (the tiles two workers cut are dim/8 coordinates long). The zero
// Machine is the fallback calibrated on a 2-vCPU VM
// (autoMinBytesPerWorker, at most GOMAXPROCS workers); Probe measures a
// Machine on the machine it runs on.
type Machine struct {
	BytesPerWorker int64 `json:"bytes_per_worker"` // 0 means autoMinBytesPerWorker
	MaxWorkers     int   `json:"max_workers"`      // 0 means GOMAXPROCS
	// ByDim, when not empty, replaces the two fields above: a call of
	// dimension dim uses the entry of the largest Dim not above dim (the
	// first entry for a dim below them all). Dims ascend.
	ByDim []DimModel `json:"by_dim,omitempty"`
}

// DimModel is the model of one probed dimension; zero fields take the
// fallback's values, as in Machine. MinBytes, when set, is the input from
// which parallelism starts: below it one worker, whatever BytesPerWorker
// says (a probe whose first win is four workers at 512 KiB gives 128 KiB
// per worker, which alone would put two workers on 256 KiB, where one
// was faster).
type DimModel struct {
	Dim            int   `json:"dim"`
	BytesPerWorker int64 `json:"bytes_per_worker"`
	MaxWorkers     int   `json:"max_workers"`
	MinBytes       int64 `json:"min_bytes,omitempty"`
}

// maxDims bounds the dimensions a Machine or a probe holds.
const maxDims = 8

// Validate reports a negative field, or dims that are not positive and
// ascending.
func (m Machine) Validate() error {
	if m.BytesPerWorker < 0 || m.MaxWorkers < 0 {
		return inputErr(ErrParam, -1, -1, "machine %v: bytes per worker and max workers must be >= 0 (0 takes the fallback)", m)
	}
	if len(m.ByDim) > maxDims {
		return inputErr(ErrParam, -1, -1, "machine: %d dimensions, at most %d", len(m.ByDim), maxDims)
	}
	for k, d := range m.ByDim {
		if d.Dim <= 0 || d.BytesPerWorker < 0 || d.MaxWorkers < 0 || d.MinBytes < 0 || (k > 0 && d.Dim <= m.ByDim[k-1].Dim) {
			return inputErr(ErrParam, -1, -1, "machine %v: dims must be positive and ascending, bytes per worker, max workers and min bytes >= 0", m)
		}
	}
	return nil
}

// Equal reports whether two Machines are the same model.
func (m Machine) Equal(o Machine) bool {
	return m.BytesPerWorker == o.BytesPerWorker && m.MaxWorkers == o.MaxWorkers && slices.Equal(m.ByDim, o.ByDim)
}

func (m Machine) String() string {
	if len(m.ByDim) == 0 {
		return DimModel{BytesPerWorker: m.BytesPerWorker, MaxWorkers: m.MaxWorkers}.String()
	}
	parts := make([]string, len(m.ByDim))
	for k, d := range m.ByDim {
		parts[k] = fmt.Sprintf("dim %d: %v", d.Dim, d)
	}
	return strings.Join(parts, "; ")
}

func (d DimModel) String() string {
	s := fmt.Sprintf("%d bytes per worker, at most %d workers", d.bytesPerWorker(), d.maxWorkers())
	if d.MinBytes > 0 {
		s += fmt.Sprintf(", one below %d bytes", d.MinBytes)
	}
	return s
}

// ForDim is the model Auto uses at dimension dim.
func (m Machine) ForDim(dim int) DimModel {
	if len(m.ByDim) == 0 {
		return DimModel{Dim: dim, BytesPerWorker: m.BytesPerWorker, MaxWorkers: m.MaxWorkers}
	}
	d := m.ByDim[0]
	for _, e := range m.ByDim[1:] {
		if e.Dim <= dim {
			d = e
		}
	}
	return d
}

func (d DimModel) bytesPerWorker() int64 {
	if d.BytesPerWorker > 0 {
		return d.BytesPerWorker
	}
	return autoMinBytesPerWorker
}

// maxWorkers is the ceiling, never above the current GOMAXPROCS.
func (d DimModel) maxWorkers() int {
	p := runtime.GOMAXPROCS(0)
	if d.MaxWorkers > 0 {
		return min(d.MaxWorkers, p)
	}
	return p
}

// Workers returns the number of workers to use for clients updates of
// dimension dim. A requested count > 0 is explicit and is clamped to
// [1, clients]; requested <= 0 (Auto) picks one worker per whole
// BytesPerWorker of input (of the model for dim), at least 1, at most the
// ceiling, GOMAXPROCS and clients.
func (m Machine) Workers(clients, dim, requested int) int {
	clients = max(clients, 1)
	if requested > 0 {
		return min(requested, clients)
	}
	d := m.ForDim(dim)
	bytes := int64(clients) * int64(max(dim, 0)) * 4
	if bytes < d.MinBytes {
		return 1
	}
	w := bytes / d.bytesPerWorker()
	w = min(w, int64(d.maxWorkers()), int64(clients))
	return int(max(w, 1))
}
