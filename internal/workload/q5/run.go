package q5

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/stack/profile"
	"github.com/sagebench/sagebench/internal/workload"
)

// q5 is Q5 HeteroResilience.
type q5 struct{ cfg *Config }

var _ workload.Workload = (*q5)(nil)

func (q *q5) Config() workload.Config { return q.cfg }

// Plan lists the load and the kill.
func (q *q5) Plan(seed int64) (workload.Plan, error) {
	s, err := load.NewSchedule(q.cfg.Load.Schedule, seed)
	if err != nil {
		return workload.Plan{}, fmt.Errorf("q5.load.%w", err)
	}
	p := workload.Plan{Phases: []workload.PlannedPhase{{Name: "hetero", Process: q.cfg.Load.Schedule.Process,
		Requests: s.Len(), Rate: s.Rate(), Span: s.Span(), Mix: q.cfg.Load.Mix(seed, s.Len()),
		Tokens: q.cfg.Load.Tokens(seed, s)}}}
	for _, e := range drill.Expand(q.cfg.Drill.Events) {
		p.Notes = append(p.Notes, "event: "+e.String())
	}
	return p, nil
}

type details struct {
	Capacity        map[string]float64 `json:"capacity_req_s"`       // per LLM engine, with the load's shape
	KilledShare     float64            `json:"killed_share"`         // capacity share of the killed engines
	UrgentFastShare float64            `json:"urgent_fast_share"`    // urgent LLM requests served by fast engines, before the fault
	IdealFastShare  float64            `json:"ideal_fast_share"`     // what an ideal router would give
	AllFastShare    float64            `json:"all_fast_share"`       // all LLM requests served by fast engines, for contrast
	GoodputPerCap   float64            `json:"goodput_per_capacity"` // pre-fault LLM goodput ÷ summed capacity
	PreThroughput   float64            `json:"pre_throughput"`       // mean windowed ok/s before the fault
	PostThroughput  float64            `json:"post_throughput"`      // after recovery (raw, with the arrivals' noise)
	TargetMet       bool               `json:"sage_target_met"`
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
	span := int64(q.cfg.Load.Span())
	width := int64(q.cfg.Drill.Series.WithDefaults().Width)
	d.PreThroughput = drill.Finite(drill.MeanThroughput(r.Windows, width, killNS), 0)
	extra := map[string]float64{"recovery_s": -1, "throughput_ratio": 0}
	var notes []string
	if ok && recov.Recovered && recov.AfterMs != nil {
		extra["recovery_s"] = *recov.AfterMs / 1000
		from := killNS + int64(*recov.AfterMs*float64(time.Millisecond))
		d.PostThroughput = drill.Finite(drill.MeanThroughput(r.Windows, from, span), 0)
	}
	if ok && recov.Recovered && recov.AfterMs != nil {
		from := killNS + int64(*recov.AfterMs*float64(time.Millisecond))
		pre, post := served(r.Records, width, killNS), served(r.Records, from, span)
		if pre > 0 {
			extra["throughput_ratio"] = post / pre
		}
	}
	d.TargetMet = extra["recovery_s"] >= 0 && extra["recovery_s"] <= q.cfg.Target.Recovery.Seconds() && extra["throughput_ratio"] >= q.cfg.Target.Throughput
	extra["sage_target_met"] = b2f(d.TargetMet)
	extra["urgent_fast_share"], extra["ideal_fast_share"], extra["all_fast_share"] = d.UrgentFastShare, d.IdealFastShare, d.AllFastShare
	extra["goodput_per_capacity"], extra["killed_share"] = d.GoodputPerCap, d.KilledShare
	notes = append(notes, fmt.Sprintf("SAGE target (p99 back within %v, throughput ≥ %.0f %%): recovery %s, throughput %.1f %% → %s",
		q.cfg.Target.Recovery, 100*q.cfg.Target.Throughput, recoveryText(extra["recovery_s"]), 100*extra["throughput_ratio"], met(d.TargetMet)))
	notes = append(notes, fmt.Sprintf("routing before the fault: %.1f %% of urgent LLM requests on fast engines (ideal %.1f %%, all LLM requests %.1f %%); goodput %.1f %% of the pool's capacity; killed engines carried %.1f %% of it",
		100*d.UrgentFastShare, 100*d.IdealFastShare, 100*d.AllFastShare, 100*d.GoodputPerCap, 100*d.KilledShare))
	return r.Outcome(extra, d, notes...)
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
func (q *q5) routing(r *drill.Run, d *details, killNS int64) {
	fast, total, fastCap := map[string]bool{}, 0.0, 0.0
	for _, e := range q.cfg.Pool {
		fast[e.ID] = e.Fast
		total += d.Capacity[e.ID]
		if e.Fast {
			fastCap += d.Capacity[e.ID]
		}
	}
	var urgent, onFast, met, ok, okFast int
	for _, rec := range r.Records {
		if rec.IntendedNS >= killNS || rec.Type != protocol.TypeLLM {
			continue
		}
		if rec.SLOMet {
			met++
		}
		if rec.OK {
			ok++
			if fast[rec.Engine] {
				okFast++
			}
		}
		if rec.OK && isUrgent(rec) {
			urgent++
			if fast[rec.Engine] {
				onFast++
			}
		}
	}
	secs := float64(killNS) / 1e9
	if ok > 0 {
		d.AllFastShare = float64(okFast) / float64(ok)
	}
	if urgent > 0 {
		d.UrgentFastShare = float64(onFast) / float64(urgent)
		d.IdealFastShare = math.Min(1, fastCap/(float64(urgent)/secs))
	}
	if total > 0 && secs > 0 {
		d.GoodputPerCap = float64(met) / secs / total
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

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func met(b bool) string {
	if b {
		return "met"
	}
	return "not met"
}

func recoveryText(s float64) string {
	if s < 0 {
		return "never"
	}
	return fmt.Sprintf("%.2f s", s)
}
