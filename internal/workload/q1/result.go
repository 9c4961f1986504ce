package q1

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/sagebench/sagebench/internal/quantile"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// Q1's metrics.
var (
	defGoodput      = result.Def{Name: "goodput", Unit: result.TxPerS, Direction: result.Higher}
	defTxnAttain    = result.Def{Name: "txn_slo_attainment", Unit: result.Fraction, Direction: result.Higher}
	defTxnP50       = result.Def{Name: "txn_e2e_p50_ms", Unit: result.Ms, Direction: result.Lower}
	defTxnP99       = result.Def{Name: "txn_e2e_p99_ms", Unit: result.Ms, Direction: result.Lower}
	defRecall       = result.Def{Name: "recall_at_k", Unit: result.Fraction, Direction: result.Higher}
	defSourceDoc    = result.Def{Name: "source_doc_retrieved", Unit: result.Fraction, Direction: result.Higher}
	defOverheadP50  = result.Def{Name: "runtime_overhead_p50_ms", Unit: result.Ms, Direction: result.Lower}
	defOverheadP99  = result.Def{Name: "runtime_overhead_p99_ms", Unit: result.Ms, Direction: result.Lower}
	defOverheadShr  = result.Def{Name: "runtime_overhead_share", Unit: result.Ratio, Direction: result.Lower}
	defOverheadPart = []result.Def{
		{Name: "runtime_overhead_queue_p50_ms", Unit: result.Ms, Direction: result.Lower},
		{Name: "runtime_overhead_operator_p50_ms", Unit: result.Ms, Direction: result.Lower},
		{Name: "runtime_overhead_sink_p50_ms", Unit: result.Ms, Direction: result.Lower},
	}
	defLagP50 = result.Def{Name: "source_lag_p50_ms", Unit: result.Ms, Direction: result.Lower}
	defLagP99 = result.Def{Name: "source_lag_p99_ms", Unit: result.Ms, Direction: result.Lower}
)

// defs are the metrics a q1.target may name.
var defs = []result.Def{defGoodput, defTxnAttain, defTxnP50, defTxnP99, defRecall, defSourceDoc, defOverheadP50, defOverheadP99}

// txnCount counts the transaction records a run hands on, and keeps
// their E2E: what goodput and the answer are computed from, on either
// backend.
type txnCount struct {
	mu         sync.Mutex
	n, ok, met int
	e2e        []float64 // of the successful transactions
}

// wrap returns rec counting every transaction record on its way.
func (c *txnCount) wrap(rec func(record.Request)) func(record.Request) {
	return func(r record.Request) {
		if r.Kind == "txn" {
			c.mu.Lock()
			c.n++
			if r.OK {
				c.ok++
				c.e2e = append(c.e2e, r.E2EMs)
			}
			if r.SLOMet {
				c.met++
			}
			c.mu.Unlock()
		}
		rec(r)
	}
}

// result is Q1's answer: goodput of the transactions over the phase,
// their E2E, and — when the stage breakdown was measured (the sage
// backend) — each stage's share, the runtime's overhead and recall@k.
func (q *q1) result(phase summary.Phase, c *txnCount, st *q1Stats, rate float64) result.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	secs := phase.Duration().Seconds()
	good := defGoodput.Measure(float64(c.met)/secs, c.n, "no transaction was sent")
	if secs <= 0 {
		good = defGoodput.NotMeasurable("the phase has no duration")
	}
	attain := defTxnAttain.Measure(float64(c.met)/float64(max(c.n, 1)), c.n, "no transaction was sent")
	if attain.Measured() {
		attain = attain.WithInterval(reqset.Wilson(c.met, c.n))
	}
	// Transaction quantiles over every transaction sent, a failed one
	// counting as +∞ (package quantile's rule, states and interval).
	all := slices.Grow(slices.Clone(c.e2e), c.n-len(c.e2e))
	for range c.n - len(c.e2e) {
		all = append(all, math.Inf(1))
	}
	p50 := quantile.OfSample(all, 0.5, quantile.Confidence).Metric(defTxnP50, "no transaction was sent")
	p99 := quantile.OfSample(all, 0.99, quantile.Confidence).Metric(defTxnP99, "no transaction was sent")
	if st == nil {
		why := "the Ray backend reports no runtime hops"
		return result.New(q.answer(good, attain, p99, rate, nil, result.Metric{}), good, attain, p50, p99,
			defRecall.NotMeasurable(why), defOverheadP50.NotMeasurable(why))
	}
	ms := st.metrics()
	recall, _ := result.New("", good, ms...).Metric(defRecall.Name)
	res := result.New(q.answer(good, attain, p99, rate, st, recall), good, append([]result.Metric{attain, p50, p99}, ms...)...)
	if t, ok := st.stageTable(); ok {
		res.Tables = append(res.Tables, t)
	}
	return res
}

// answer says how many transactions per second met the SLO, against the
// offered rate, and where the time went.
func (q *q1) answer(good, attain, p99 result.Metric, rate float64, st *q1Stats, recall result.Metric) string {
	if !good.Measured() {
		return "not answered: goodput is " + result.Format(good)
	}
	// Goodput ÷ offered and SLO attainment are two figures: the first
	// divides by the rate the schedule offered, the second by the
	// transactions that were sent (they differ when the driver sent fewer
	// or the phase ran longer than the schedule).
	ratio := "–"
	if rate > 0 {
		ratio = result.FormatValue(good.Value/rate, result.Fraction)
	}
	s := fmt.Sprintf("the RAG pipeline delivered %s within its %v end-to-end SLO, %s of the %.1f tx/s offered; SLO attainment %s of %d transactions; transaction E2E p99 %s",
		result.Format(good), q.cfg.SLO.E2E, ratio, rate, result.Format(attain), attain.N, result.ShortN(p99))
	if st != nil {
		if name, share, ok := st.biggestStage(); ok {
			s += fmt.Sprintf("; %s took %.0f %% of the mean E2E", name, 100*share)
		}
		if recall.Measured() {
			s += fmt.Sprintf("; recall@%d %.3f", q.cfg.TopK, recall.Value)
		} else {
			s += "; recall@k " + result.Format(recall)
		}
	}
	return s
}

// metrics are the stage breakdown's run-wide figures and recall@k.
func (s *q1Stats) metrics() []result.Metric {
	n := len(s.e2e)
	const none = "no transaction succeeded"
	o50, e50 := reqset.Quantile(s.overhead, 0.5), reqset.Quantile(s.e2e, 0.5)
	ms := []result.Metric{
		defOverheadP50.Measure(o50, n, none),
		defOverheadP99.Measure(reqset.Quantile(s.overhead, 0.99), n, none),
		defOverheadShr.Measure(o50/e50, n, none),
		defLagP50.Measure(reqset.Quantile(s.lag, 0.5), n, none),
		defLagP99.Measure(reqset.Quantile(s.lag, 0.99), n, none),
	}
	for k, d := range defOverheadPart {
		ms = append(ms, d.Measure(reqset.Quantile(s.parts[k], 0.5), n, none))
	}
	if c := s.pipe.cutNote(); c != "" {
		for i := range ms {
			if ms[i].Measured() {
				ms[i] = ms[i].WithReason(c)
			}
		}
	}
	return append(ms, s.pipe.recall()...)
}

// biggestStage is the stage with the largest share of the mean E2E.
func (s *q1Stats) biggestStage() (string, float64, bool) {
	total := sum(s.e2e)
	best, share := "", 0.0
	for j, st := range s.graph.Stages {
		if sh := sum(s.stageMs[j]) / total; total > 0 && sh > share {
			best, share = st.Name, sh
		}
	}
	return best, share, best != ""
}

// stageTable is the per-stage breakdown: time in the stage (queueing +
// service), its share of the mean E2E, queueing and workers.
func (s *q1Stats) stageTable() (result.Table, bool) {
	if len(s.e2e) == 0 {
		return result.Table{}, false
	}
	t := result.Table{Key: TableStages, Title: "Stage breakdown",
		Note:    fmt.Sprintf("over %d successful transactions; a stage's time is its queueing and service in the runtime", len(s.e2e)),
		Columns: []string{"stage", "p50", "p99", "share of E2E", "queueing p50", "queueing p99", "workers"}}
	if c := s.pipe.cutNote(); c != "" {
		t.Note += "; " + c
	}
	total := sum(s.e2e)
	for j, st := range s.graph.Stages {
		n := len(s.stageMs[j])
		def := func(name, unit string) result.Def {
			return result.Def{Name: "stage_" + st.Name + "_" + name, Unit: unit, Direction: result.Lower}
		}
		none := "no transaction passed the stage"
		t.AddRow(result.Text(st.Name),
			result.Of(def("p50_ms", result.Ms).Measure(reqset.Quantile(s.stageMs[j], 0.5), n, none)),
			result.Of(def("p99_ms", result.Ms).Measure(reqset.Quantile(s.stageMs[j], 0.99), n, none)),
			result.Of(def("share", result.Fraction).Measure(math.Min(sum(s.stageMs[j])/total, 1), n, none)),
			result.Of(def("queue_p50_ms", result.Ms).Measure(reqset.Quantile(s.queueMs[j], 0.5), n, none)),
			result.Of(def("queue_p99_ms", result.Ms).Measure(reqset.Quantile(s.queueMs[j], 0.99), n, none)),
			result.Textf("%d", stageParallelism(s.graph, st)))
	}
	return t, true
}

// saturation warns of stages whose median queueing exceeds their median
// service, with the workers Little's law says they need at rate tx/s.
func (s *q1Stats) saturation(rate float64) []string {
	var warn []string
	for j, st := range s.graph.Stages {
		p50, q50 := reqset.Quantile(s.stageMs[j], 0.5), reqset.Quantile(s.queueMs[j], 0.5)
		if len(s.queueMs[j]) == 0 || q50 <= p50-q50 {
			continue
		}
		busy := (sum(s.stageMs[j]) - sum(s.queueMs[j])) / float64(len(s.stageMs[j])) / 1000 // mean service, s
		par := stageParallelism(s.graph, st)
		warn = append(warn, fmt.Sprintf("stage %s is saturated (median queueing above median service): at %.1f tx/s and %.0f ms mean service it needs ≥ %d workers (Little's law), it has %d; raise --parallelism or q1.graph.stages[%d].parallelism",
			st.Name, rate, 1000*busy, int(math.Ceil(rate*busy)), par, j))
	}
	return warn
}
