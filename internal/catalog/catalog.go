// Package catalog is the ordered list of sagebench's workload families,
// Q1..Q8: each entry is the Spec its package exports, or, for a Q this
// build does not implement yet, its name and rules alone. Adding a Q is
// one package under internal/workload and one line here. Lookup and
// Select resolve the names users type (Q2, q2, ControlMix, control_plane).
package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sagebench/sagebench/internal/workload"
	"github.com/sagebench/sagebench/internal/workload/q1"
	"github.com/sagebench/sagebench/internal/workload/q2"
	"github.com/sagebench/sagebench/internal/workload/q3"
	"github.com/sagebench/sagebench/internal/workload/q4"
	"github.com/sagebench/sagebench/internal/workload/q5"
	"github.com/sagebench/sagebench/internal/workload/q6"
	"github.com/sagebench/sagebench/internal/workload/q7"
	"github.com/sagebench/sagebench/internal/workload/q8"
)

// Catalog lists Q1..Q8 in order.
func Catalog() []workload.Spec {
	return []workload.Spec{
		q1.Spec(),
		q2.Spec(),
		q3.Spec(),
		q4.Spec(),
		q5.Spec(),
		q6.Spec(),
		q7.Spec(),
		q8.Spec(),
	}
}

// Lookup finds a Q by ID (case-insensitive: q2, Q2), name or entry.
func Lookup(name string) (workload.Spec, error) {
	for _, s := range Catalog() {
		if strings.EqualFold(name, s.ID) || strings.EqualFold(name, s.Name) || strings.EqualFold(name, s.Entry) {
			return s, nil
		}
	}
	return workload.Spec{}, fmt.Errorf("unknown experiment %q; choose one of %s", name, strings.Join(IDs(), ", "))
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
func Select(names []string, all bool) ([]workload.Spec, error) {
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
	var out []workload.Spec
	for _, s := range Catalog() {
		if slices.Contains(ids, s.ID) {
			out = append(out, s)
		}
	}
	return out, nil
}

// Implemented returns the IDs of the Qs this build can run.
func Implemented() []string {
	var ids []string
	for _, s := range Catalog() {
		if s.Implemented() {
			ids = append(ids, s.ID)
		}
	}
	return ids
}
