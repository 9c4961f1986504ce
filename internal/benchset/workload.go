package benchset

import (
	"fmt"
	"strings"

	"github.com/sagebench/sagebench/internal/aggregate"
)

// WorkloadMismatchError says two runs of one benchmark name ran
// different workloads (their workload_hash differs): their results are
// not samples of one thing, so they are never compared or pooled.
type WorkloadMismatchError struct {
	Name string
	A, B Run
	// Keys are the config keys that differ ("key: a ≠ b"), when both
	// runs' configurations are known.
	Keys []string
}

func (e *WorkloadMismatchError) Error() string {
	msg := fmt.Sprintf("%s: %s (workload_hash %s) and %s (workload_hash %s) ran different workloads; they are not compared",
		e.Name, e.A.Dir, short(e.A.WorkloadHash), e.B.Dir, short(e.B.WorkloadHash))
	if len(e.Keys) > 0 {
		msg += "; keys that differ: " + strings.Join(e.Keys, ", ")
	}
	return msg + " (compare runs of one configuration, or pass each alone)"
}

func short(h string) string { return h[:min(len(h), 12)] }

// CheckWorkloads returns a *WorkloadMismatchError for the first two runs
// of one benchmark name, in any of sets, whose workload hashes differ.
// Runs without a hash (Go benchmarks, pytest, older records) are not
// checked.
func CheckWorkloads(sets ...*Set) error {
	first := map[string]Run{}
	for _, s := range sets {
		for _, r := range s.Runs {
			if r.WorkloadHash == "" {
				continue
			}
			prev, ok := first[r.Name]
			if !ok {
				first[r.Name] = r
				continue
			}
			if prev.WorkloadHash != r.WorkloadHash {
				e := &WorkloadMismatchError{Name: r.Name, A: prev, B: r}
				if len(prev.Config) > 0 && len(r.Config) > 0 {
					e.Keys = aggregate.ConfigDiff(prev.Config, r.Config)
				}
				return e
			}
		}
	}
	return nil
}
