package q1

import (
	"encoding/json"
	"fmt"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

var _ workload.Recomputer = (*q1)(nil)

// Recompute computes the result from the run's records alone: goodput,
// SLO attainment and the transaction quantiles from the txn lines of
// requests.jsonl over run.json's phase; the offered rate from the
// schedule of the config and seed; the stage breakdown and the
// runtime's overhead from pipeline.json's rows joined with their txn and
// stage lines (the stages and workers of the graph the config and
// --parallelism deploy); recall@k from the rows' retrieved and exact
// ids. A row without its lines is an error: the records do not hold
// the run.
func (q *q1) Recompute(rec workload.Records) (result.Result, error) {
	b, ok := rec.Files[filePipeline]
	if !ok {
		return result.Result{}, errNoPipeline
	}
	pr, err := readPipeline(b)
	if err != nil {
		return result.Result{}, err
	}
	if pr.K != q.cfg.TopK {
		return result.Result{}, fmt.Errorf("%s: k %d, but run_config's q1.top_k is %d", filePipeline, pr.K, q.cfg.TopK)
	}
	if len(rec.Phases) != 1 {
		return result.Result{}, fmt.Errorf("run.json has %d phases; a Q1 run has one", len(rec.Phases))
	}
	sched, err := load.NewSchedule(q.cfg.Schedule, rec.Run.Seed)
	if err != nil {
		return result.Result{}, fmt.Errorf("q1.%w", err)
	}
	count := &txnCount{}
	add := count.wrap(func(record.Request) {})
	for _, r := range rec.Requests {
		add(r)
	}
	if rec.Run.Backend == backendRay {
		res := q.result(rec.Phases[0], count, nil, sched.Rate())
		replaceMetrics(&res, pr.recall())
		return res, nil
	}
	var shared struct {
		Parallelism int `json:"parallelism"`
	}
	if err := json.Unmarshal(rec.Run.RunConfig, &shared); err != nil {
		return result.Result{}, fmt.Errorf("run_config: %w", err)
	}
	g := q.cfg.deployGraph(shared.Parallelism)
	if err := joinRequests(pr.Rows, g, rec.Requests); err != nil {
		return result.Result{}, err
	}
	return q.result(rec.Phases[0], count, statsOf(g, pr), sched.Rate()), nil
}

// backendRay is run.json's backend of a --backend ray run.
const backendRay = "ray"
