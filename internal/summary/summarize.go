package summary

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/record"
)

// Validity holds the rules a run must meet to count: the driver delivered
// its own schedule. The zero value means the defaults.
type Validity struct {
	// MinDeliveredRatio is the lowest delivered ÷ scheduled rate (default 0.99).
	MinDeliveredRatio float64 `yaml:"min_delivered_ratio" json:"min_delivered_ratio"`
	// MaxLagP99Ms is the highest p99 schedule lag in ms (default 5).
	MaxLagP99Ms float64 `yaml:"max_lag_p99_ms" json:"max_lag_p99_ms"`
}

// DefaultValidity returns the validity rules of docs/design.md.
func DefaultValidity() Validity { return Validity{MinDeliveredRatio: 0.99, MaxLagP99Ms: 5} }

// Validate reports rules that cannot be met or make no sense.
func (v Validity) Validate() error {
	if v.MinDeliveredRatio < 0 || v.MinDeliveredRatio > 1 {
		return fmt.Errorf("validity.min_delivered_ratio %g: must be in [0,1]", v.MinDeliveredRatio)
	}
	if v.MaxLagP99Ms < 0 {
		return fmt.Errorf("validity.max_lag_p99_ms %g: must be ≥ 0", v.MaxLagP99Ms)
	}
	return nil
}

func (v Validity) withDefaults() Validity {
	d := DefaultValidity()
	if v.MinDeliveredRatio == 0 {
		v.MinDeliveredRatio = d.MinDeliveredRatio
	}
	if v.MaxLagP99Ms == 0 {
		v.MaxLagP99Ms = d.MaxLagP99Ms
	}
	return v
}

// Summarize folds everything added so far with the phases' timing into a
// Summary (Primary is left for the workload to fill) and returns the
// reasons the run is invalid under v (none: valid).
func (c *Collector) Summarize(phases []Phase, v Validity) (record.Summary, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var total time.Duration
	dur := map[string]time.Duration{}
	for _, p := range phases {
		total += p.Duration()
		dur[p.Name] += p.Duration()
	}
	s := record.Summary{
		Requests:        c.all.count,
		Failed:          c.all.errors,
		Succeeded:       c.all.count - c.all.errors,
		DurationSeconds: total.Seconds(),
		ScheduleLag:     c.lag.latency(),
		E2E:             c.all.e2e.latency(),
		SLOAttainment:   ratio(c.all.met, c.all.count),
		SuccessRate:     ratio(c.all.count-c.all.errors, c.all.count),
		Throughput:      perSecond(c.all.count-c.all.errors, total),
		Goodput:         perSecond(c.all.met, total),
	}
	s.E2ECountingFailures = E2ECountingFailures(s)
	s.TargetRate, s.DeliveredRate = c.rates(phases)
	s.Groups = c.groupSummaries(dur, total)
	s.Retry = c.retry.summary(c.all, total)
	if c.overE2E.count() > 0 {
		s.HarnessOverhead = &record.Overhead{TTFT: c.overTTFT.latency(), E2E: c.overE2E.latency()}
	}
	return s, c.check(phases, v.withDefaults())
}

// rates returns the schedule's rate and the rate actually sent, over all
// open-loop phases.
func (c *Collector) rates(phases []Phase) (target, delivered float64) {
	var sched, sent int
	var schedSpan, sentSpan time.Duration
	for _, p := range phases {
		if p.ClosedLoop || p.ScheduleSpan <= 0 {
			continue
		}
		sched += p.Scheduled
		schedSpan += p.ScheduleSpan
		if pa := c.phases[p.Name]; pa != nil {
			sent += pa.sent
			// Sending late stretches the span; sending early never shrinks it.
			sentSpan += max(time.Duration(pa.lastSent)-p.Start, p.ScheduleSpan)
		}
	}
	return perSecond(sched, schedSpan), perSecond(sent, sentSpan)
}

func (c *Collector) check(phases []Phase, v Validity) []string {
	var reasons []string
	openLag := newDist()
	for _, p := range phases {
		where := ""
		if p.Name != "" && len(phases) > 1 {
			where = "phase " + p.Name + ": "
		}
		if p.Interrupted {
			reasons = append(reasons, where+"interrupted before its schedule ended")
			continue
		}
		if p.ClosedLoop {
			continue
		}
		one := []Phase{p}
		target, delivered := c.rates(one)
		if target > 0 && delivered < v.MinDeliveredRatio*target {
			reasons = append(reasons, fmt.Sprintf("%sdelivered rate %.2f req/s is below %.0f%% of the scheduled %.2f req/s",
				where, delivered, 100*v.MinDeliveredRatio, target))
		}
		if pa := c.phases[p.Name]; pa != nil {
			openLag.merge(pa.lag)
		}
	}
	// The lag rule pools the open-loop phases: a phase of a quick run
	// has ~100 requests, whose p99 is its second-worst lag, so two
	// isolated hiccups of the shared machine would void a phase while
	// the run delivered its schedule. A phase that really lagged moves
	// the pooled p99 too.
	if lag := openLag.quantile(99); lag > v.MaxLagP99Ms {
		reasons = append(reasons, fmt.Sprintf("schedule lag p99 %.2f ms is above %.2f ms", lag, v.MaxLagP99Ms))
	}
	return append(reasons, c.rejectedTypes()...)
}

func (c *Collector) groupSummaries(dur map[string]time.Duration, total time.Duration) []record.Group {
	out := make([]record.Group, 0, len(c.groups))
	for _, a := range c.groups {
		d := total
		if ph, ok := a.labels[LabelPhase]; ok {
			d = dur[ph]
		}
		g := record.Group{
			Labels:        a.labels,
			Count:         a.count,
			Errors:        a.errors,
			StreamErrors:  new(a.streamErrors),
			SLOAttainment: ratio(a.met, a.count),
			Goodput:       perSecond(a.met, d),
			E2E:           a.e2e.latency(),
			Service:       a.service.latency(),
			TTFT:          a.ttft.latency(),
			TPOT:          a.tpot.latency(),
			ITL:           a.itl.latency(),
		}
		GroupCountingFailures(&g)
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b record.Group) int {
		return cmp.Or(cmp.Compare(setIndex(a.Labels), setIndex(b.Labels)),
			cmp.Compare(labelKey(a.Labels), labelKey(b.Labels)))
	})
	return out
}

// setIndex orders groups as groupSets lists them, stage groups last.
func setIndex(labels map[string]string) int {
	for i, set := range groupSets {
		if len(set) != len(labels) {
			continue
		}
		match := true
		for _, k := range set {
			if _, ok := labels[k]; !ok {
				match = false
			}
		}
		if match {
			return i
		}
	}
	return len(groupSets)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
