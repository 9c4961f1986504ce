package q5

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/stack/profile"
	"github.com/sagebench/sagebench/internal/workload"
)

// q5 is Q5 HeteroResilience.
type q5 struct{ cfg *Config }

var _ workload.Workload = (*q5)(nil)

func (q *q5) Config() workload.Config { return q.cfg }

// Plan lists the load and the kill.
func (q *q5) Plan(seed int64) (workload.Plan, error) {
	return q.cfg.Base.Plan("q5", "hetero", seed, q.cfg.Drill.Events)
}

// Q5's metrics.
var (
	defRecovery        = result.Def{Name: "recovery_s", Unit: result.Seconds, Direction: result.Lower}
	defThroughputRatio = result.Def{Name: "throughput_ratio", Unit: result.Ratio, Direction: result.Higher}
	defUrgentFast      = result.Def{Name: "urgent_fast_share", Unit: result.Fraction, Direction: result.Higher}
	defIdealFast       = result.Def{Name: "ideal_fast_share", Unit: result.Fraction, Direction: result.Higher}
	defAllFast         = result.Def{Name: "all_fast_share", Unit: result.Fraction, Direction: result.Higher}
	defGoodputPerCap   = result.Def{Name: "goodput_per_capacity", Unit: result.Ratio, Direction: result.Higher}
	defKilledShare     = result.Def{Name: "killed_share", Unit: result.Fraction, Direction: result.Lower}
)

// defs are the metrics a q5.target may name.
var defs = []result.Def{defRecovery, defThroughputRatio, defUrgentFast, defGoodputPerCap}

// details are Q5's own measurements.
type details struct {
	Capacity      map[string]float64 // per LLM engine, with the load's shape
	KilledShare   float64            // capacity share of the killed engines
	urgentFast    result.Metric      // urgent LLM requests served by fast engines, before the fault
	idealFast     result.Metric      // what an ideal router would give
	allFast       result.Metric      // all LLM requests served by fast engines, for contrast
	goodputPerCap result.Metric      // pre-fault LLM goodput ÷ summed capacity
}

// Run drives the load, kills the fast engine and measures.
func (q *q5) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	r, err := drill.Drive(ctx, env, "hetero", q.cfg.Load, q.cfg.Drill)
	if err != nil {
		return workload.Outcome{}, fmt.Errorf("q5: %w", err)
	}
	d, err := q.capacity()
	if err != nil {
		return workload.Outcome{}, err
	}
	killNS, recov, ok := q.fault(r)
	q.routing(r, &d, killNS)
	recovery, ratio := q.recovery(r, killNS, recov, ok)
	res := result.New(q.answer(r, recovery, ratio, d), recovery, ratio, d.urgentFast, d.idealFast, d.allFast, d.goodputPerCap,
		defKilledShare.Measure(d.KilledShare, len(d.Capacity), "no LLM engine in the pool"))
	return r.Outcome(res)
}

// recovery is the time from the kill until the windowed metric was back
// within its bound for the hold time (never when it was not by the end),
// and the throughput ratio: the share of requests served after recovery
// over the share before the fault.
func (q *q5) recovery(r *drill.Run, killNS int64, recov drill.EventRecovery, ok bool) (rec, ratio result.Metric) {
	if !ok {
		why := "the kill was not performed"
		return defRecovery.NotMeasurable(why), defThroughputRatio.NotMeasurable(why)
	}
	step := q.cfg.Drill.Series.WithDefaults().Step.Seconds()
	if !recov.Recovered || recov.AfterMs == nil {
		why := "never back within the bound for the hold time by the end of the run"
		return defRecovery.Never(why), defThroughputRatio.NotMeasurable("no recovery to measure after")
	}
	rec = defRecovery.Measure(*recov.AfterMs/1000, 1, "").WithResolution(step)
	from := killNS + int64(*recov.AfterMs*float64(time.Millisecond))
	width := int64(q.cfg.Drill.Series.WithDefaults().Width)
	pre, post := served(r.Records, width, killNS), served(r.Records, from, int64(q.cfg.Load.Span()))
	if pre <= 0 {
		return rec, defThroughputRatio.NotMeasurable("nothing was served before the fault")
	}
	return rec, defThroughputRatio.Measure(post/pre, len(r.Records), "")
}

// answer says how long the pool took to recover from the kill and what
// it kept.
func (q *q5) answer(r *drill.Run, rec, ratio result.Metric, d details) string {
	kill := "the kill"
	for _, e := range r.Events {
		if e.Action == drill.Kill {
			kill = fmt.Sprintf("SIGKILL of %s at %.1f s (%.0f %% of the pool's capacity)", e.Target, float64(e.ActualNS)/1e9, 100*d.KilledShare)
			break
		}
	}
	return fmt.Sprintf("after %s the windowed %s was back within %v after %s; served share after ÷ before %s; urgent requests on fast engines before the fault %s (ideal %s)",
		kill, q.cfg.Drill.Recovery.Metric, q.cfg.Drill.Recovery.Bound, result.Format(rec), result.Short(ratio), result.Short(d.urgentFast), result.Short(d.idealFast))
}

// fault returns the first performed kill and the recovery after it.
func (q *q5) fault(r *drill.Run) (int64, drill.EventRecovery, bool) {
	for _, e := range r.Events {
		if e.Action == drill.Kill && e.Outcome == drill.OutcomeOK {
			x, ok := r.RecoveryOf(e.Seq)
			return e.ActualNS, x, ok
		}
	}
	return int64(q.cfg.Load.Span()), drill.EventRecovery{}, false
}

// capacity is each LLM engine's request rate at full batch with the
// load's shape: the batch the KV cache allows, its step time, and
// max_tokens decode steps per request.
func (q *q5) capacity() (details, error) {
	cat, err := profile.Default()
	if err != nil {
		return details{}, err
	}
	d := details{Capacity: map[string]float64{}}
	total, killed := 0.0, 0.0
	in, out := q.cfg.Load.LLM.Mean(1000) // the shape's mean lengths
	for _, e := range q.cfg.Pool {
		if e.Kind != "llm" {
			continue
		}
		p, err := cat.LLM(e.Profile)
		if err != nil {
			return details{}, fmt.Errorf("q5.pool %s: %w", e.ID, err)
		}
		seqs := max(min(p.MaxNumSeqs, p.KVCacheTokens/max(p.KVTokens(int(in), int(out)), 1)), 1)
		c := float64(seqs) / p.StepTime(seqs).Seconds() / max(out, 1)
		d.Capacity[e.ID] = c
		total += c
		for _, ev := range q.cfg.Drill.Events {
			if ev.Action == drill.Kill && ev.Engine == e.ID {
				killed += c
			}
		}
	}
	if total > 0 {
		d.KilledShare = killed / total
	}
	return d, nil
}

// routing measures, before the fault, the share of urgent LLM requests
// served by fast engines against the ideal share (all of them while the
// fast engines' capacity covers the urgent rate), and goodput ÷ capacity.
// A target whose records carry no engine ID leaves the shares not
// measurable.
func (q *q5) routing(r *drill.Run, d *details, killNS int64) {
	fast, total, fastCap := map[string]bool{}, 0.0, 0.0
	for _, e := range q.cfg.Pool {
		fast[e.ID] = e.Fast
		total += d.Capacity[e.ID]
		if e.Fast {
			fastCap += d.Capacity[e.ID]
		}
	}
	var urgent, onFast, met, ok, okFast, withEngine int
	for _, rec := range r.Records {
		if rec.IntendedNS >= killNS || rec.Type != protocol.TypeLLM {
			continue
		}
		if rec.SLOMet {
			met++
		}
		if !rec.OK {
			continue
		}
		ok++
		if rec.Engine != "" {
			withEngine++
		}
		if fast[rec.Engine] {
			okFast++
		}
		if isUrgent(rec) {
			urgent++
			if fast[rec.Engine] {
				onFast++
			}
		}
	}
	secs := float64(killNS) / 1e9
	noEngine := "the target reports no engine ID (X-Engine-Id) on its answers"
	switch {
	case withEngine == 0:
		d.urgentFast, d.allFast = defUrgentFast.NotMeasurable(noEngine), defAllFast.NotMeasurable(noEngine)
	default:
		d.urgentFast = defUrgentFast.Measure(float64(onFast)/float64(max(urgent, 1)), urgent, "no urgent LLM request succeeded before the fault")
		d.allFast = defAllFast.Measure(float64(okFast)/float64(max(ok, 1)), ok, "no LLM request succeeded before the fault")
	}
	d.idealFast = defIdealFast.Measure(math.Min(1, fastCap/(float64(urgent)/secs)), urgent, "no urgent LLM request succeeded before the fault")
	d.goodputPerCap = defGoodputPerCap.Measure(float64(met)/secs/total, ok, "no LLM request succeeded before the fault")
	if total <= 0 || secs <= 0 {
		d.goodputPerCap = defGoodputPerCap.NotMeasurable("the pool's capacity is unknown")
	}
}

// served is the share of the requests intended in [from, to) that
// succeeded: throughput over the offered load, so that the ratio of two
// spans does not read Poisson noise in the arrivals as lost capacity.
func served(recs []record.Request, from, to int64) float64 {
	ok, n := 0, 0
	for _, r := range recs {
		if r.IntendedNS >= from && r.IntendedNS < to {
			n++
			if r.OK {
				ok++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(ok) / float64(n)
}

func isUrgent(r record.Request) bool {
	return slices.Contains([]string{"critical", "high"}, r.Priority)
}
