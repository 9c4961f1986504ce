// Package fedavgtest simulates machines for the FedAvg probe: a Machine's
// Trial method has the shape of fedavg.Trial and returns the time a
// simulated FedAvg takes, so that the probe's decisions (checks, fitting,
// revalidation, the probe cache) are tested without timing anything.
package fedavgtest

import "math/rand/v2"

// Machine is a simulated 2-core machine: FedAvg reads 60 bytes per ns
// alone; two or more workers cut the time to 0.6× for a fixed 3 µs of
// dispatch, so two workers win above about 450 KB. The zero Machine is
// quiet and exact.
type Machine struct {
	// Load multiplies the time of every trial with more than one worker
	// (another process holds a core); values <= 1 mean none.
	Load float64
	// Jitter adds up to this share of uniform noise to every trial.
	Jitter float64
	// Drift makes every trial slower than the one before by this factor
	// (a machine getting busier), so that no two trials agree.
	Drift float64
	// Calls counts the trials run.
	Calls int

	rng *rand.Rand
}

// Quiet is a quiet machine with 2 % jitter; Loaded one whose second core
// is held by another process.
func Quiet() *Machine  { return &Machine{Jitter: 0.02} }
func Loaded() *Machine { return &Machine{Load: 2, Jitter: 0.02} }

// Trial is the simulated time of FedAvg over size bytes with workers.
func (m *Machine) Trial(size int64, workers int) (float64, error) {
	if m.rng == nil {
		m.rng = rand.New(rand.NewPCG(1, 2))
	}
	m.Calls++
	ns := float64(size) / 60
	if workers > 1 {
		ns = (ns*0.6 + 3000) * max(m.Load, 1)
	}
	for range m.Calls {
		ns *= 1 + m.Drift
	}
	return ns * (1 + m.Jitter*m.rng.Float64()), nil
}
