// Package fedavgtest simulates machines for the FedAvg probe: a Machine's
// Trial method has the shape of fedavg.Trial and returns the time a
// simulated FedAvg takes, so that the probe's decisions (checks, fitting,
// revalidation, the probe cache) are tested without timing anything.
package fedavgtest

import (
	"math"
	"math/rand/v2"
)

// Machine is a simulated machine: FedAvg reads 60 bytes per ns alone;
// w >= 2 workers take Share(dim, w) of that time plus a fixed 3 µs of
// dispatch (by default 0.6 at every dim, so that two workers win above
// about 450 KB). The zero Machine is quiet and exact.
type Machine struct {
	// Share is t(w workers) ÷ t(one worker) before the dispatch, per
	// dimension and worker count w >= 2; nil means 0.6.
	Share func(dim, workers int) float64
	// Load multiplies the time of every trial with more than one worker
	// (another process holds a core); values <= 1 mean none.
	Load float64
	// Jitter adds up to this share of uniform noise to every trial.
	Jitter float64
	// Lucky is the chance that a one-worker trial runs 20 % faster than
	// it should (the other CPU idle, the core at its boost clock): rare
	// fast outliers, which the minimum of a cell picks up.
	Lucky float64
	// Drift makes every trial slower than the one before by this factor
	// (a machine getting busier), so that no two trials agree.
	Drift float64
	// Seed seeds the noise; machines of different seeds are different
	// runs of the same machine.
	Seed uint64
	// Calls counts the trials run.
	Calls int

	rng *rand.Rand
}

// Quiet is a quiet machine with 2 % jitter; Loaded one whose second core
// is held by another process.
func Quiet() *Machine  { return &Machine{Jitter: 0.02} }
func Loaded() *Machine { return &Machine{Load: 2, Jitter: 0.02} }

// Trial is the simulated time of FedAvg over size bytes of dimension dim
// with workers.
func (m *Machine) Trial(dim int, size int64, workers int) (float64, error) {
	if m.rng == nil {
		m.rng = rand.New(rand.NewPCG(1, 2+m.Seed))
	}
	m.Calls++
	ns := float64(size) / 60
	if workers > 1 {
		share := 0.6
		if m.Share != nil {
			share = m.Share(dim, workers)
		}
		ns = (ns*share + 3000) * max(m.Load, 1)
	}
	ns *= math.Pow(1+m.Drift, float64(m.Calls))
	if workers == 1 && m.rng.Float64() < m.Lucky {
		ns *= 0.8
	}
	return ns * (1 + m.Jitter*m.rng.Float64()), nil
}
