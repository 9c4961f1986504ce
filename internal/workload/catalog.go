package workload

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sagebench/sagebench/internal/record"
)

// Spec is a catalog entry: a workload family and, when this build has it,
// how to make one.
type Spec struct {
	ID          string // Q1..Q8
	Name        string // e.g. ControlMix
	Entry       string // entry name of the original benchmark, e.g. control_plane
	Description string
	// PhaseLabel names what a phase is (e.g. "policy"); it becomes the key
	// of the phase element in bench.txt names. Empty: phases are not named.
	PhaseLabel string
	// New returns a workload with the defaults of its full or quick scale;
	// nil when this build does not implement the Q yet.
	New func(quick bool) Workload
	// Primary picks the primary metric out of a summary; nil → goodput.
	Primary func(record.Summary) record.Metric
}

// Implemented reports whether this build can run the Q.
func (s Spec) Implemented() bool { return s.New != nil }

// Section is the key of the Q's section in a config file, e.g. "q2".
func (s Spec) Section() string { return strings.ToLower(s.ID) }

// BenchName is the Go benchmark name stem, e.g. Q2ControlMix.
func (s Spec) BenchName() string { return s.ID + s.Name }

// PrimaryMetric returns the Q's primary metric of sum.
func (s Spec) PrimaryMetric(sum record.Summary) record.Metric {
	if s.Primary != nil {
		return s.Primary(sum)
	}
	return record.Metric{Name: "goodput", Value: sum.Goodput, Unit: "req/s"}
}

// Catalog lists Q1..Q8 in order.
func Catalog() []Spec {
	return []Spec{
		q1Spec(),
		q2Spec(),
		{ID: "Q3", Name: "NoisyNeighbor", Entry: "isolation",
			Description: "an interactive tenant alone, then beside a ramping batch tenant; primary: interference ratio (victim p99 TTFT contended ÷ alone)"},
		{ID: "Q4", Name: "ScaleFrontier", Entry: "scalability",
			Description: "highest arrival rate meeting the SLO for n = 1, 2, 4 … nodes; primary: scaling efficiency"},
		{ID: "Q5", Name: "HeteroResilience", Entry: "heterogeneity",
			Description: "heterogeneous pool, the fast engine killed mid-run; primary: recovery time and post-recovery throughput"},
		{ID: "Q6", Name: "BurstTown", Entry: "burst_priority",
			Description: "base load with periodic bursts, 20 % high priority; primary: high-priority SLO attainment inside bursts"},
		{ID: "Q7", Name: "ReconfigDrill", Entry: "reconfiguration",
			Description: "steady load through policy switch, engine add, drain and remove; primary: requests failed by reconfiguration"},
		{ID: "Q8", Name: "RecoverySoak", Entry: "recovery",
			Description: "long mixed load with periodic SIGKILL/SIGSTOP/slowdown faults; primary: lost requests and availability"},
	}
}

// Lookup finds a Q by ID (case-insensitive: q2, Q2), name or entry.
func Lookup(name string) (Spec, error) {
	for _, s := range Catalog() {
		if strings.EqualFold(name, s.ID) || strings.EqualFold(name, s.Name) || strings.EqualFold(name, s.Entry) {
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("unknown experiment %q; choose one of %s", name, strings.Join(IDs(), ", "))
}

// IDs returns Q1..Q8.
func IDs() []string {
	var ids []string
	for _, s := range Catalog() {
		ids = append(ids, s.ID)
	}
	return ids
}

// Select resolves experiment names (each may be a comma list) into specs
// in catalog order without duplicates; all selects the whole catalog.
func Select(names []string, all bool) ([]Spec, error) {
	if all {
		return Catalog(), nil
	}
	var ids []string
	for _, n := range names {
		for _, part := range strings.Split(n, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			s, err := Lookup(part)
			if err != nil {
				return nil, err
			}
			ids = append(ids, s.ID)
		}
	}
	var out []Spec
	for _, s := range Catalog() {
		if slices.Contains(ids, s.ID) {
			out = append(out, s)
		}
	}
	return out, nil
}
