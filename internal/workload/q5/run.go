package q5

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/result"
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
	defTTFTBefore      = result.Def{Name: "ttft_p99_before_ms", Unit: result.Ms, Direction: result.Lower}
	defTTFTAfter       = result.Def{Name: "ttft_p99_after_kill_ms", Unit: result.Ms, Direction: result.Lower}
	defUrgentFast      = result.Def{Name: "urgent_fast_share", Unit: result.Fraction, Direction: result.Higher}
	defIdealFast       = result.Def{Name: "ideal_fast_share", Unit: result.Fraction, Direction: result.Higher}
	defAllFast         = result.Def{Name: "all_fast_share", Unit: result.Fraction, Direction: result.Higher}
	defGoodputPerCap   = result.Def{Name: "goodput_per_capacity", Unit: result.Ratio, Direction: result.Higher}
	defKilledShare     = result.Def{Name: "killed_share", Unit: result.Fraction, Direction: result.Lower}
)

// defs are the metrics a q5.target may name.
var defs = []result.Def{defRecovery, defThroughputRatio, defTTFTAfter, defUrgentFast, defGoodputPerCap, drill.DefLost, drill.DefAvailability}

// kill is the first performed kill and what followed it.
type kill struct {
	ok       bool
	seq      int
	engine   string
	atNS     int64
	recovery drill.EventRecovery
}

// Run measures the pool's capacity, drives the load, kills the fast
// engine and measures.
func (q *q5) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	r, err := drill.Drive(ctx, env, phaseName, q.cfg.Load, q.cfg.Drill)
	return q.outcome(r, err)
}

// phaseName is the drill's load phase.
const phaseName = "hetero"

// Recompute computes the result from the run's records alone
// (drill.FromRecords: the requests, events.jsonl, drill.json).
func (q *q5) Recompute(rec workload.Records) (result.Result, error) {
	r, err := drill.FromRecords(rec, phaseName, q.cfg.Load, q.cfg.Drill)
	o, err := q.outcome(r, err)
	return o.Result, err
}

// outcome measures the drill r that Drive (or FromRecords) returned with err.
func (q *q5) outcome(r *drill.Run, err error) (workload.Outcome, error) {
	if np := (*drill.NoPlateauError)(nil); errors.As(err, &np) {
		return r.Aborted(defRecovery, np), nil
	}
	if err != nil {
		return workload.Outcome{}, fmt.Errorf("q5: %w", err)
	}
	k := q.kill(r)
	rt := q.routing(r, k)
	rec, ratio := q.recovery(r, k)
	before, after := q.ttft(r, k)
	res := result.New(q.answer(r, k, rec, ratio, before, after, rt), rec, ratio, before, after,
		rt.urgentFast, rt.idealFast, rt.allFast, rt.goodputPerCap, rt.killedShare)
	return r.Outcome(res)
}

// kill finds the first performed kill and its recovery.
func (q *q5) kill(r *drill.Run) kill {
	for _, e := range r.Events {
		if e.Action == drill.Kill && e.Outcome == drill.OutcomeOK {
			x, ok := r.RecoveryOf(e.Seq)
			return kill{ok: ok, seq: e.Seq, engine: e.Target, atNS: e.ActualNS, recovery: x}
		}
	}
	return kill{atNS: r.Phase.Start.Nanoseconds() + int64(q.cfg.Load.Span())}
}

// span is the load's [start + one window, last intended send): the part
// of the run the Q reads.
func (q *q5) span(r *drill.Run) (from, to int64) {
	from = int64(r.Phase.Start + q.cfg.Drill.Series.WithDefaults().Width)
	for i := range r.Records {
		to = max(to, r.Records[i].IntendedNS)
	}
	return from, to
}

// recovery is the time from the kill until the windowed metric was back
// within its bound for the hold time — through the outage until the
// restart, when one followed (the kill event's own recovery_ms counts from
// the restart, the fault's end) — 0 when it never broke it, never when it
// did not come back by the end; and the throughput ratio: ok requests
// delivered per second after the recovery ÷ before the kill.
func (q *q5) recovery(r *drill.Run, k kill) (rec, ratio result.Metric) {
	if !k.ok {
		why := "the kill was not performed"
		return defRecovery.NotMeasurable(why), defThroughputRatio.NotMeasurable(why)
	}
	x := k.recovery
	from, end := q.span(r)
	after, how := k.atNS+int64(q.cfg.Drill.Series.WithDefaults().Width), "from one window after the kill (no violation)"
	rec = x.RecoveryMetric(defRecovery, x.EventNS)
	switch x.Verdict() {
	case drill.Unmeasurable:
		return rec, defThroughputRatio.NotMeasurable(x.Unmeasurable)
	case drill.Recovered:
		rec = rec.WithReason(fromKill(x, rec))
		after, how = x.RecoveredNS, "from the recovery"
	case drill.Censored, drill.NeverRecovered:
		after, how = k.atNS, "from the kill (it did not recover)"
	}
	return rec, throughputRatio(r.Records, from, k.atNS, after, end, how)
}

// fromKill says what recovery_s counts: from the kill, through the
// outage until the restart when there was one.
func fromKill(x drill.EventRecovery, m result.Metric) string {
	rule := x.RuleHeld()
	if m.State == result.Bound {
		rule = m.Reason
	}
	if x.FaultEndNS > x.EventNS {
		then := "recovered in " + result.FormatValue(x.AfterMs/1000, result.Seconds)
		if x.AfterMs < x.ResolutionMs {
			then = "recovered within one window step (≤ " + result.FormatValue(x.ResolutionMs/1000, result.Seconds) + ")"
		}
		return fmt.Sprintf("%s, from the kill: the engine was down %.2f s until its restart, then %s", rule,
			float64(x.FaultEndNS-x.EventNS)/1e9, then)
	}
	return rule + ", from the kill"
}

// throughputRatio is the delivered share of the requests offered in
// [after, end) ÷ that of those offered in [from, kill): ok ÷ offered, by
// intended send (a backlog served late counts where it was offered), so
// that the arrivals' own Poisson noise — what was offered in each span —
// cancels. Its interval combines the two spans' Wilson 97.5 % intervals
// (the post's low ÷ the pre's high, and the other way): a coverage of at
// least 95 % (Bonferroni).
func throughputRatio(recs []record.Request, from, kill, after, end int64, how string) result.Metric {
	if kill-from < int64(time.Second) || end-after < int64(time.Second) {
		return defThroughputRatio.NotMeasurable("less than a second of load before the kill or after the recovery")
	}
	preOK, preN := delivered(recs, from, kill, kill) // a request the kill cut is the kill's
	postOK, postN := delivered(recs, after, end, 0)
	if preOK == 0 || postN == 0 {
		return defThroughputRatio.NotMeasurable("nothing was delivered before the kill or offered after the recovery")
	}
	share := func(k, n int) float64 { return float64(k) / float64(n) }
	ratio := share(postOK, postN) / share(preOK, preN)
	pl, ph := reqset.WilsonAt(preOK, preN, 0.975)
	ql, qh := reqset.WilsonAt(postOK, postN, 0.975)
	rate := func(n int, lo, hi int64) float64 { return float64(n) / (float64(hi-lo) / 1e9) }
	return defThroughputRatio.Measure(ratio, preN+postN, "").WithInterval(ql/ph, qh/pl).WithReason(
		fmt.Sprintf("delivered ÷ offered %s to the end of the load (%d of %d, offered %s) ÷ before the kill (%d of %d, offered %s); interval ≥ 95 %% (two Wilson 97.5 %%)", how,
			postOK, postN, result.FormatValue(rate(postN, after, end), result.ReqPerS), preOK, preN, result.FormatValue(rate(preN, from, kill), result.ReqPerS)))
}

// delivered counts the ok requests intended in [from, to) and all of
// them (the offered), leaving out those a fault at cutNS cut (drill.CutBy;
// 0: none): they count for the fault, as in the TTFT before it.
func delivered(recs []record.Request, from, to, cutNS int64) (ok, offered int) {
	for i := range recs {
		if recs[i].IntendedNS >= from && recs[i].IntendedNS < to && (cutNS == 0 || !drill.CutBy(&recs[i], cutNS, "ttft")) {
			offered++
			if recs[i].OK {
				ok++
			}
		}
	}
	return ok, offered
}

// ttft is the p99 TTFT of the chat completions intended before the kill,
// and of those intended from the kill until the recovery (the end when
// it never recovered or the SLO was never broken).
func (q *q5) ttft(r *drill.Run, k kill) (before, after result.Metric) {
	from, end := q.span(r)
	until := end
	if k.recovery.Verdict() == drill.Recovered {
		until = k.recovery.RecoveredNS
	}
	cutByKill := true // before the kill: a request the kill cut is the kill's
	p99 := func(d result.Def, lo, hi int64, why string) result.Metric {
		var rs []record.Request
		for _, rec := range r.Records {
			if rec.Type == protocol.TypeLLM && rec.IntendedNS >= lo && rec.IntendedNS < hi && (!cutByKill || !drill.CutBy(&rec, k.atNS, "ttft")) {
				rs = append(rs, rec)
			}
		}
		m := reqset.TailOf(rs, 0.99, reqset.TTFT).Metric(d, why)
		if m.Measured() {
			m = m.WithReason(fmt.Sprintf("%d chat completions, a failed one counting +∞", len(rs)))
		}
		return m
	}
	before = p99(defTTFTBefore, from, k.atNS, "no chat completion was offered before the kill")
	cutByKill = false
	if !k.ok {
		return before, defTTFTAfter.NotMeasurable("the kill was not performed")
	}
	return before, p99(defTTFTAfter, k.atNS, until+1, "no chat completion was offered after the kill")
}

// answer says what the kill did to the loaded pool and how long it took
// to recover.
func (q *q5) answer(r *drill.Run, k kill, rec, ratio, before, after result.Metric, rt routing) string {
	if !k.ok {
		return "not answered: the kill was not performed (" + firstOr(r.NotPerformed(), "no kill event") + ")"
	}
	load := "at a fixed rate"
	if c := r.Sizing.Capacity; c != nil {
		load = fmt.Sprintf("at %.2f of the pool's measured capacity (%s)", r.Sizing.Utilisation, result.FormatValue(c.Rate, result.ReqPerS))
	}
	survivors := ""
	if u, ok := r.Sizing.UtilisationWith(map[string]float64{k.engine: 1}); ok {
		survivors = fmt.Sprintf(", leaving the survivors at %s their capacity", result.FormatValue(u, result.Ratio))
	}
	return fmt.Sprintf("%s, SIGKILL of %s (%s of the capacity) at %.1f s%s: TTFT p99 went from %s to %s and was back within %v after %s; delivered throughput after ÷ before %s; urgent requests on fast engines before the fault %s (ideal %s)",
		load, k.engine, result.Short(rt.killedShare), float64(k.atNS)/1e9, survivors, result.Short(before), result.Short(after),
		q.cfg.Drill.Recovery.Bound, result.Format(rec), result.Short(ratio), result.Short(rt.urgentFast), result.Short(rt.idealFast))
}

func firstOr(xs []string, def string) string {
	if len(xs) == 0 {
		return def
	}
	return xs[0]
}

// routing is the routing quality before the fault.
type routing struct {
	urgentFast    result.Metric // urgent LLM requests served by fast engines
	idealFast     result.Metric // what an ideal router would give
	allFast       result.Metric // all LLM requests served by fast engines, for contrast
	goodputPerCap result.Metric // goodput ÷ the measured capacity
	killedShare   result.Metric // the killed engine's share of the LLM capacity
}

// routing measures, before the fault, the share of urgent LLM requests
// served by fast engines against the ideal share (all of them while the
// fast engines' measured capacity covers the urgent rate), and goodput ÷
// the measured capacity. A target that reports no engine ID leaves the
// shares not measurable.
func (q *q5) routing(r *drill.Run, k kill) routing {
	fast := map[string]bool{}
	for _, e := range q.cfg.Pool {
		fast[e.ID] = e.Fast
	}
	from, _ := q.span(r)
	var urgent, onFast, met, n, ok, okFast, withEngine int
	for _, rec := range r.Records {
		if rec.IntendedNS < from || rec.IntendedNS >= k.atNS {
			continue
		}
		n++
		if rec.SLOMet {
			met++
		}
		if rec.Type != protocol.TypeLLM || !rec.OK {
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
	secs := float64(k.atNS-from) / 1e9
	var rt routing
	noEngine := "the target reported no engine ID (X-Engine-Id) on its answers"
	if withEngine == 0 {
		rt.urgentFast, rt.allFast = defUrgentFast.NotMeasurable(noEngine), defAllFast.NotMeasurable(noEngine)
	} else {
		rt.urgentFast = defUrgentFast.Measure(float64(onFast)/float64(max(urgent, 1)), urgent, "no urgent LLM request succeeded before the fault")
		rt.allFast = defAllFast.Measure(float64(okFast)/float64(max(ok, 1)), ok, "no LLM request succeeded before the fault")
	}
	rt.idealFast, rt.killedShare, rt.goodputPerCap = q.capacityShares(r, fast, k, float64(urgent)/secs, urgent)
	if c := r.Sizing.Capacity; c != nil && secs > 0 {
		g := float64(met) / secs / c.Rate
		rt.goodputPerCap = defGoodputPerCap.Measure(g, n, "nothing was sent before the fault").
			WithReason("SLO-meeting requests per second before the fault ÷ the measured capacity")
		if rt.goodputPerCap.Measured() && !c.Saturated {
			rt.goodputPerCap = defGoodputPerCap.Within(0, g, n, "the capacity is a lower bound (the probe's clients ran out first)")
		}
	}
	return rt
}

// capacityShares are the ideal fast share (the fast engines' measured
// capacity over the urgent rate, at most 1) and the killed engine's share
// of the LLM capacity, from the capacity probe.
func (q *q5) capacityShares(r *drill.Run, fast map[string]bool, k kill, urgentRate float64, urgent int) (ideal, killed, gpc result.Metric) {
	gpc = defGoodputPerCap.NotMeasurable("the load's rate was fixed: the capacity was not measured")
	c := r.Sizing.Capacity
	if c == nil || len(c.Engines) == 0 {
		why := "the capacity probe did not see which engine served each request"
		if c == nil {
			why = "the load's rate was fixed: the capacity was not measured"
		}
		return defIdealFast.NotMeasurable(why), defKilledShare.NotMeasurable(why), gpc
	}
	fastCap := 0.0
	for id, e := range c.Engines {
		if fast[id] && e.Type == protocol.TypeLLM {
			fastCap += e.Rate
		}
	}
	ideal = defIdealFast.Measure(min(1, fastCap/urgentRate), urgent, "no urgent LLM request succeeded before the fault")
	killed = defKilledShare.NotMeasurable(fmt.Sprintf("%s served nothing during the capacity probe", k.engine))
	if e, ok := c.Engines[k.engine]; ok {
		killed = defKilledShare.Measure(e.Share, 1, "").WithReason("its share of the chat completions at saturation in the capacity probe")
	}
	return ideal, killed, gpc
}

func isUrgent(r record.Request) bool {
	return slices.Contains([]string{"critical", "high"}, r.Priority)
}
