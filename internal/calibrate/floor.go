package calibrate

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
)

// Goal is what a floor must meet for the harness to call itself exact
// at a workload's rate.
const Goal = "TTFT and E2E median error ≤ 1 % and p99 error ≤ 0.5 ms; delivered rate within 0.5 % of target"

// FloorOf computes the measurement floor from the records of a run
// against the exact server of cfg. targetRate and deliveredRate are the
// run's schedule summary (req/s).
func FloorOf(reqs []record.Request, cfg Config, targetRate, deliveredRate float64) record.Floor {
	cfg = cfg.WithDefaults()
	var ttft, itl, e2e, late errs
	f := record.Floor{MeasuredAt: time.Now().UTC(), TargetRate: targetRate, DeliveredRate: deliveredRate, Goal: Goal}
	for i := range reqs {
		r := &reqs[i]
		if r.Kind != "request" {
			continue
		}
		if !r.OK {
			f.Failed++
			continue
		}
		f.Requests++
		trueTTFT, trueE2E := truth(r, cfg)
		if r.FirstToken > 0 {
			ttft.add(r.TTFTMs, trueTTFT)
		}
		e2e.add(r.E2EMs, trueE2E)
		for k := 1; k < len(r.TokenNS); k++ {
			itl.add(float64(r.TokenNS[k]-r.TokenNS[k-1])/1e6, record.Millis(cfg.ITL))
		}
		if r.ServerTTFTMs > 0 && r.Type == protocol.TypeLLM {
			late.add(r.ServerTTFTMs, record.Millis(cfg.TTFT))
		}
	}
	f.TTFT, f.ITL, f.E2E, f.ServerLate = ttft.stats(), itl.stats(), e2e.stats(), late.stats()
	if targetRate > 0 {
		f.RateErrorPct = (deliveredRate/targetRate - 1) * 100
	}
	f.GoalMet, f.Notes = judge(f)
	return f
}

// truth is what the exact server really did for r, in ms from its
// receipt of the request: the times it reports writing the first token
// and the last byte. Without a report it is what the server was due to
// do. The server's own lateness (reported − due) is measured apart, so a
// late server is not counted as the harness's error.
func truth(r *record.Request, cfg Config) (ttft, e2e float64) {
	if r.ServerE2EMs > 0 {
		return r.ServerTTFTMs, r.ServerE2EMs
	}
	if r.Type == protocol.TypeEmbedding {
		return record.Millis(cfg.EmbedLatency), record.Millis(cfg.EmbedLatency)
	}
	n := max(r.OutputTok, len(r.TokenNS), 1)
	return record.Millis(cfg.TTFT), record.Millis(cfg.TTFT + time.Duration(n-1)*cfg.ITL)
}

func judge(f record.Floor) (bool, []string) {
	var notes []string
	check := func(name string, s record.ErrorStats) {
		if s.Count == 0 {
			return
		}
		if math.Abs(s.MedianPct) > 1 {
			notes = append(notes, fmt.Sprintf("%s median error %.2f %% exceeds 1 %%", name, s.MedianPct))
		}
		if s.P99 > 0.5 {
			notes = append(notes, fmt.Sprintf("%s p99 error %.3f ms exceeds 0.5 ms", name, s.P99))
		}
	}
	check("TTFT", f.TTFT)
	check("E2E", f.E2E)
	if math.Abs(f.RateErrorPct) > 0.5 {
		notes = append(notes, fmt.Sprintf("delivered rate off by %.2f %% (more than 0.5 %%)", f.RateErrorPct))
	}
	if f.Failed > 0 {
		notes = append(notes, fmt.Sprintf("%d requests failed against the exact server", f.Failed))
	}
	return len(notes) == 0, notes
}

// errs collects measured-minus-true errors in ms, and the true values
// for the relative median.
type errs struct{ d, truth []float64 }

func (e *errs) add(measured, truth float64) {
	e.d = append(e.d, measured-truth)
	e.truth = append(e.truth, truth)
}

func (e *errs) stats() record.ErrorStats {
	s := record.ErrorStats{Count: len(e.d)}
	if s.Count == 0 {
		return s
	}
	d := slices.Clone(e.d)
	slices.Sort(d)
	s.Median, s.P99, s.Max = nearest(d, 50), nearest(d, 99), d[len(d)-1]
	t := slices.Clone(e.truth)
	slices.Sort(t)
	if tm := nearest(t, 50); tm > 0 {
		s.MedianPct = s.Median / tm * 100
	}
	return s
}

func nearest(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
