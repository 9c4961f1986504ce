package leaderboard

import (
	"sort"

	"golang.org/x/perf/benchmath"
)

// shape is what two backends must share to be compared.
type shape struct {
	Workload    string
	Nodes       int
	Parallelism int
}

// compareBackends pairs every two backends that ran the same workload
// and shape, on the seeds both ran, using valid runs only.
func compareBackends(rows []Row, alpha float64) []Comparison {
	by := map[shape]map[string][]Row{}
	for _, r := range rows {
		if !r.Valid {
			continue
		}
		s := shape{r.Workload, r.Nodes, r.Parallelism}
		if by[s] == nil {
			by[s] = map[string][]Row{}
		}
		by[s][r.Backend] = append(by[s][r.Backend], r)
	}
	var out []Comparison
	for s, backends := range by {
		names := make([]string, 0, len(backends))
		for n := range backends {
			names = append(names, n)
		}
		sort.Strings(names)
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
		return a.Base+"/"+a.Other < b.Base+"/"+b.Other
	})
	return out
}

func compareTwo(s shape, base, other string, a, b []Row, alpha float64) (Comparison, bool) {
	seeds := commonSeeds(a, b)
	if len(seeds) == 0 {
		return Comparison{}, false
	}
	a, b = withSeeds(a, seeds), withSeeds(b, seeds)
	c := Comparison{Workload: s.Workload, Nodes: s.Nodes, Parallelism: s.Parallelism, Base: base, Other: other, Seeds: seeds}
	for _, m := range Metrics {
		xa, xb := values(a, m.Of), values(b, m.Of)
		sa, sb := benchmath.NewSample(xa, &benchmath.DefaultThresholds), benchmath.NewSample(xb, &benchmath.DefaultThresholds)
		d := MetricDelta{Metric: m.Name, Base: mean(xa), Other: mean(xb), P: 1}
		if d.Base != 0 {
			d.DeltaPct = 100 * (d.Other - d.Base) / d.Base
		}
		if len(xa) >= 2 && len(xb) >= 2 {
			d.P = benchmath.AssumeNormal.Compare(sa, sb).P
		}
		d.Significant = d.P < alpha
		if d.Significant {
			d.Better = base
			if (d.Other > d.Base) == (m.Dir > 0) {
				d.Better = other
			}
		}
		c.Metrics = append(c.Metrics, d)
	}
	return c, true
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

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
