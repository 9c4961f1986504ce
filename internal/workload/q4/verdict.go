package q4

import (
	"math"

	"github.com/aclements/go-moremath/stats"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
)

// minTrials is the fewest trials a rate is judged on: the trial, not
// the request, is the independent unit (a trial's latencies share its
// queue), so a verdict needs the spread between trials.
const minTrials = 2

// within is, for one latency bound, the share of a probe's requests
// that met it (a failed request never does) with a confidence interval
// that treats each trial as one independent draw: the pooled share
// Σmet ÷ Σn, its cluster-robust (between-trial) standard error with
// Student's t over trials − 1 degrees of freedom, never narrower than
// the Wilson interval of the pooled requests.
type within struct {
	Share, Lo, Hi float64
	Trials        int
}

// shareWithin measures within over rs, grouped into trials by phase.
func shareWithin(rs []record.Request, boundMs float64, latency func(*record.Request) (float64, bool)) within {
	met, n := map[string]float64{}, map[string]float64{}
	var order []string
	var sm, sn float64
	for i := range rs {
		ph := rs[i].Phase
		if _, ok := n[ph]; !ok {
			order = append(order, ph)
		}
		n[ph]++
		sn++
		if v, ok := latency(&rs[i]); ok && v <= boundMs {
			met[ph]++
			sm++
		}
	}
	w := within{Trials: len(order), Lo: 0, Hi: 1}
	if sn == 0 {
		return w
	}
	w.Share = sm / sn
	wl, wh := reqset.Wilson(int(sm), int(sn))
	if w.Trials < minTrials {
		return w
	}
	ss := 0.0
	for _, ph := range order {
		r := met[ph] - w.Share*n[ph]
		ss += r * r
	}
	t := float64(w.Trials)
	se := math.Sqrt(t/(t-1)*ss) / sn
	h := stats.InvCDF(stats.TDist{V: t - 1})(0.975) * se
	w.Lo, w.Hi = math.Max(0, math.Min(w.Share-h, wl)), math.Min(1, math.Max(w.Share+h, wh))
	return w
}
