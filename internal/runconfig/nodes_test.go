package runconfig

import (
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/workload"
	"github.com/sagebench/sagebench/internal/workload/q1"
	"github.com/sagebench/sagebench/internal/workload/q2"
	"github.com/sagebench/sagebench/internal/workload/q3"
	"github.com/sagebench/sagebench/internal/workload/q4"
	"github.com/sagebench/sagebench/internal/workload/q5"
	"github.com/sagebench/sagebench/internal/workload/q6"
)

// TestResolveNodes: --nodes N is accepted for Q1 (operators on the
// workers) and for the Qs whose load goes through traffic.Phase (Q3, Q4,
// Q6: sharded over the workers) at 1, 2 and 4 nodes, and recorded in the
// effective config; the others refuse it naming the Qs that take it.
func TestResolveNodes(t *testing.T) {
	for _, tc := range []struct {
		spec workload.Spec
		ok   bool
	}{
		{q1.Spec(), true}, {q3.Spec(), true}, {q4.Spec(), true}, {q6.Spec(), true},
		{q2.Spec(), false}, {q5.Spec(), false},
	} {
		for _, nodes := range []int{1, 2, 4} {
			for _, quick := range []bool{true, false} {
				s := DefaultShared()
				s.Nodes, s.Quick = nodes, quick
				r, _, err := Resolve(tc.spec, s, nil, workload.Overrides{})
				switch {
				case tc.ok || nodes == 1:
					if err != nil {
						t.Errorf("%s --nodes %d (quick %v): %v", tc.spec.ID, nodes, quick, err)
					} else if !strings.Contains(string(r.RunConfig), `"nodes":`+string(rune('0'+nodes))) {
						t.Errorf("%s --nodes %d: run_config %s", tc.spec.ID, nodes, r.RunConfig)
					}
				case err == nil || !strings.Contains(err.Error(), tc.spec.ID+" runs on one node") || !strings.Contains(err.Error(), "Q3, Q4, Q6"):
					t.Errorf("%s --nodes %d: %v; want refused naming the Qs that take it", tc.spec.ID, nodes, err)
				}
			}
		}
	}
}
