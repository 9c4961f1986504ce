package leaderboard

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/sagebench/sagebench/internal/aggregate"
)

// shape is what two backends must share to be compared: the same
// workload (workload_hash: the configuration without the backend), the
// same nodes and the same configuration of a run.
type shape struct {
	WorkloadHash string
	Nodes        int
	Config       string
}

// compareBackends pairs every two backends that ran the same workload
// and shape, on the seeds both ran, using valid runs only. Backends that
// ran the same Q, nodes and configuration with different workload hashes
// are not compared: refused says so, naming both hashes and what
// differs.
func compareBackends(rows []Row, alpha float64, read runConfigs) (out []Comparison, refused []string) {
	by := map[shape]map[string][]Row{}
	for _, r := range rows {
		if !r.Valid {
			continue
		}
		s := shape{r.workloadHash(), r.Nodes, r.Config}
		if by[s] == nil {
			by[s] = map[string][]Row{}
		}
		by[s][r.Backend] = append(by[s][r.Backend], r)
	}
	for s, backends := range by {
		names := sortedKeys(backends)
		for i := 0; i < len(names); i++ {
			for j := i + 1; j < len(names); j++ {
				if c, ok := compareTwo(s, names[i], names[j], backends[names[i]], backends[names[j]], alpha); ok {
					out = append(out, c)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Workload != b.Workload {
			return a.Workload < b.Workload
		}
		if a.Config != b.Config {
			return a.Config < b.Config
		}
		return a.Base+"/"+a.Other < b.Base+"/"+b.Other
	})
	return out, mismatches(by, read)
}

// mismatches names the backends that ran one Q, nodes and configuration
// under different workload hashes: they are never compared.
func mismatches(by map[shape]map[string][]Row, read runConfigs) []string {
	type loose struct {
		Workload, Config string
		Nodes            int
	}
	hashes := map[loose]map[string][]Row{} // workload hash → rows, backends in name order
	for s, backends := range by {
		for _, name := range sortedKeys(backends) { // the first row's backend does not depend on map order
			rows := backends[name]
			l := loose{rows[0].Workload, s.Config, s.Nodes}
			if hashes[l] == nil {
				hashes[l] = map[string][]Row{}
			}
			hashes[l][s.WorkloadHash] = append(hashes[l][s.WorkloadHash], rows...)
		}
	}
	var out []string
	for l, hs := range hashes {
		keys := sortedKeys(hs)
		for i := 0; i < len(keys); i++ {
			for j := i + 1; j < len(keys); j++ {
				a, b := hs[keys[i]][0], hs[keys[j]][0]
				if a.Backend == b.Backend {
					continue // one backend's two workloads: two entries, nothing to compare
				}
				out = append(out, fmt.Sprintf("%s nodes=%d%s: %s runs (workload_hash %s) and %s runs (workload_hash %s) ran different workloads and are not compared%s",
					l.Workload, l.Nodes, configSuffix(l.Config), a.Backend, short(keys[i]), b.Backend, short(keys[j]), differing(a, b, read)))
			}
		}
	}
	sort.Strings(out)
	return out
}

// differing says which config keys differ between the runs of a and b,
// when both run.json files can be read.
func differing(a, b Row, read runConfigs) string {
	ca, erra := read.of(a)
	cb, errb := read.of(b)
	if erra != nil || errb != nil {
		return " (their run.json files were not found to name the keys that differ)"
	}
	d := aggregate.ConfigDiff(ca, cb)
	if len(d) == 0 {
		return ""
	}
	return "; keys that differ: " + strings.Join(d, ", ")
}

func configSuffix(c string) string {
	if c == "" {
		return ""
	}
	return " " + c
}

func short(h string) string {
	if h == "" {
		return "(none)"
	}
	return h[:min(len(h), 12)]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func compareTwo(s shape, base, other string, a, b []Row, alpha float64) (Comparison, bool) {
	seeds := commonSeeds(a, b)
	if len(seeds) == 0 || s.WorkloadHash == "" {
		return Comparison{}, false
	}
	a, b = withSeeds(a, seeds), withSeeds(b, seeds)
	c := Comparison{Workload: a[0].Workload, WorkloadHash: s.WorkloadHash, Nodes: s.Nodes, Config: s.Config, Base: base, Other: other, Seeds: seeds}
	for _, m := range Metrics {
		xa, xb := measured(a, m), measured(b, m)
		if len(xa) == 0 || len(xb) == 0 {
			continue // not measured on one side: nothing to compare
		}
		sa, sb := benchmath.NewSample(xa, &benchmath.DefaultThresholds), benchmath.NewSample(xb, &benchmath.DefaultThresholds)
		d := MetricDelta{Metric: m.Name(), Unit: m.Def.Unit, Base: avg(xa), Other: avg(xb), P: 1, N: [2]int{len(xa), len(xb)}}
		if d.Base != 0 {
			d.DeltaPct = 100 * (d.Other - d.Base) / d.Base
		}
		if len(xa) >= 2 && len(xb) >= 2 {
			d.P = benchmath.AssumeNormal.Compare(sa, sb).P
		}
		d.Significant = d.P < alpha
		if d.Significant {
			d.Better = base
			if (d.Other > d.Base) == (m.Def.Direction == "higher") {
				d.Better = other
			}
		}
		c.Metrics = append(c.Metrics, d)
	}
	return c, true
}

func measured(rows []Row, m Metric) []float64 {
	var out []float64
	for _, r := range rows {
		if v := m.Of(r); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

func commonSeeds(a, b []Row) []int64 {
	in := map[int64]bool{}
	for _, r := range a {
		in[r.Seed] = true
	}
	seen := map[int64]bool{}
	var out []int64
	for _, r := range b {
		if in[r.Seed] && !seen[r.Seed] {
			seen[r.Seed] = true
			out = append(out, r.Seed)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func withSeeds(rows []Row, seeds []int64) []Row {
	keep := map[int64]bool{}
	for _, s := range seeds {
		keep[s] = true
	}
	var out []Row
	for _, r := range rows {
		if keep[r.Seed] {
			out = append(out, r)
		}
	}
	return out
}

func avg(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
