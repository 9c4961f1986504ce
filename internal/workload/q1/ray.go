package q1

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	raydriver "github.com/sagebench/sagebench/backends/ray"
	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/rag"
	"github.com/sagebench/sagebench/internal/ray"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
)

// q1Ray is Q1 with its client side on a Ray cluster (--backend ray): the
// same schedule, questions and stages, run by the Ray driver
// (backends/ray) as a Ray job whose records come back in its log.
type q1Ray struct {
	*q1
	cluster ray.Config
}

var _ workload.OnRay = (*q1)(nil)

// OnRay returns Q1 on the cluster c, sharing q's configuration.
func (q *q1) OnRay(c ray.Config) workload.Workload { return &q1Ray{q1: q, cluster: c} }

// Run checks the cluster, rebuilds the questions as the sage backend does,
// submits the job with the plan, follows it (its log to env.Log, a stop
// when ctx is cancelled) and records what the driver reported. A run
// whose driver never declared its stages ready sent nothing: its error is
// a *workload.NotStartedError (the runner then keeps no run directory).
func (q *q1Ray) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	c, err := ray.NewClient(q.cluster)
	if err != nil {
		return workload.Outcome{}, notStarted(err)
	}
	v, err := c.Version(ctx) // first: an unreachable cluster fails before any work
	if err != nil {
		return workload.Outcome{}, notStarted(err)
	}
	sched, err := load.NewSchedule(q.cfg.Schedule, env.Seed)
	if err != nil {
		return workload.Outcome{}, fmt.Errorf("q1.%w", err)
	}
	ix, notes, err := q.corpus(ctx, env)
	if err != nil {
		return workload.Outcome{}, err
	}
	qs, err := q.cfg.questions(ix, sched.Len(), env)
	if err != nil {
		return workload.Outcome{}, err
	}
	if note := qs.note(env.Synth().Tokenizer().Name()); note != "" {
		notes = append(notes, note)
	}
	runID := rayRunID(env)
	plan := q.rayPlan(env.Parallelism, sched, qs.queries, runID)
	plan.Target = env.Target.URL()
	var secrets map[string]any // the job's env_vars: the target's key, kept out of the package
	if key := env.Target.APIKey(); key != "" || q.cluster.TargetKeyEnv != "" {
		plan.APIKeyEnv = cmp.Or(q.cluster.TargetKeyEnv, ray.TargetKeyEnv)
		if q.cluster.TargetKeyEnv == "" {
			secrets = map[string]any{ray.TargetKeyEnv: key}
		}
	}
	job, out, err := q.submit(ctx, c, env, plan, secrets)
	if err != nil {
		return workload.Outcome{}, err
	}
	notes = append(notes, rayNotes(c, v, job, out)...)
	count := &txnCount{}
	counted := *env
	counted.Record = count.wrap(env.Record)
	phase := q.recordRay(&counted, sched, out, qs.tokens)
	phase.Interrupted = phase.Interrupted || ctx.Err() != nil
	if ctx.Err() == nil && (job.Status != ray.StatusSucceeded || !out.Done) {
		return workload.Outcome{}, rayFailure(job, out)
	}
	pr := q.rayPipeline(env.Target.IsEmbedded(), ix, qs.queries, out)
	f, err := pr.file()
	if err != nil {
		return workload.Outcome{}, fmt.Errorf("q1: %s: %w", filePipeline, err)
	}
	res := q.result(phase, count, nil, sched.Rate())
	replaceMetrics(&res, pr.recall())
	return workload.Outcome{Phases: []summary.Phase{phase}, LoadMode: load.ModeOpen, Notes: notes, Result: res,
		Files: []record.File{f}}, nil
}

// rayPipeline is pipeline.json of a Ray run: a row per transaction
// whose retrieve stage returned documents (the driver's records'
// retrieved_ids, its first k), with exact search's k best on the local
// corpus, each question embedded locally as the embedded stack embeds
// it; recall@k is not measurable on another target, whose index is not
// the local corpus. The Ray driver reports no runtime hops: the rows'
// times are zero and no figure reads them.
func (q *q1Ray) rayPipeline(embedded bool, ix *corpus.Corpus, queries []corpus.Query, out ray.Output) pipelineRecord {
	ids := retrievedIDs(out)
	var rows []txnRow
	for i, qu := range queries {
		if got, ok := ids[txnID(i)]; ok {
			rows = append(rows, txnRow{Seq: i, SourceDoc: qu.DocID, Retrieved: got[:min(len(got), q.cfg.TopK)]})
		}
	}
	why := ""
	if !embedded {
		why = whyExternal
	}
	return sealRows(q.cfg.TopK, rows, why, func(r txnRow) ([]int, error) {
		return exactIDs(ix, corpus.Vector(queries[r.Seq].Text, ix.Config().Dim), q.cfg.TopK)
	}, maxPipelineBytes)
}

// retrievedIDs are the document ids of each transaction's successful
// retrieve stage, by transaction id.
func retrievedIDs(out ray.Output) map[string][]int {
	ids := map[string][]int{}
	for _, raw := range out.Records {
		var r struct {
			TxnID        string `json:"txn_id"`
			Type         string `json:"type"` // the retrieve stage records type "retrieve", as its op
			OK           bool   `json:"ok"`
			RetrievedIDs []int  `json:"retrieved_ids"`
		}
		if json.Unmarshal(raw, &r) == nil && r.Type == rag.OpRetrieve && r.OK && r.RetrievedIDs != nil {
			ids[r.TxnID] = r.RetrievedIDs
		}
	}
	return ids
}

// replaceMetrics puts each of ms in place of res's metric of its name.
func replaceMetrics(res *result.Result, ms []result.Metric) {
	for _, m := range ms {
		for i := range res.Metrics {
			if res.Metrics[i].Name == m.Name {
				res.Metrics[i] = m
			}
		}
	}
}

func notStarted(err error) error { return &workload.NotStartedError{Err: err} }

// rayRunID is the run's id, or one derived from the repetition and its
// start when the runner did not set it.
func rayRunID(env *workload.Env) string {
	if env.RunID != "" {
		return env.RunID
	}
	return fmt.Sprintf("q1-ray-%d-%x", env.Repetition, env.Start.UnixNano())
}

// rayPlan is the driver's plan: Q1's stages, each with its own settings
// (model and max_tokens from the stage's params as the sage backend's
// operators read them, top_k for retrieve), the parallelism sage would
// give it and the connections to warm (openai.WarmConns of the
// schedule's rate, as the sage run warms, at most one per worker), and
// every arrival with its question.
func (q *q1Ray) rayPlan(parallelism int, sched load.Schedule, queries []corpus.Query, runID string) ray.Plan {
	g := q.cfg.deployGraph(parallelism)
	p := ray.Plan{Version: ray.PlanVersion, RunID: runID, Workload: "Q1",
		Tenant: q.cfg.Tenant, DeadlineMS: q.cfg.SLO.E2E.Milliseconds(),
		Embedding: q.cfg.Embedding.Model, LLM: q.cfg.LLM.Model, TimeoutS: 60, ReadyTimeoutS: 120}
	warm := openai.WarmConns(sched.Rate())
	for _, s := range g.Stages {
		st := ray.Stage{Name: s.Name, Op: s.Operator, Model: s.Params["model"],
			Parallelism: stageParallelism(g, s), TimeoutS: s.Timeout.Seconds()}
		st.WarmConns = min(warm, st.Parallelism)
		switch s.Operator {
		case rag.OpGenerate:
			st.MaxTokens, _ = strconv.Atoi(s.Params["max_tokens"]) // validated ≥ 1 with the graph
		case rag.OpRetrieve:
			st.TopK = q.cfg.TopK // what the sage source puts in every transaction
		}
		p.Stages = append(p.Stages, st)
	}
	for i, off := range sched.Offsets {
		p.Arrivals = append(p.Arrivals, ray.Arrival{Seq: i, OffsetNS: int64(off), Query: queries[i].Text})
	}
	return p
}

// jobSpec is the job of runID whose working_dir is workingDir.
func jobSpec(runID, workingDir string) ray.JobSpec {
	return ray.JobSpec{Entrypoint: raydriver.Entrypoint(ray.PlanFile), SubmissionID: ray.SubmissionID(runID),
		RuntimeEnv: map[string]any{"working_dir": workingDir},
		Metadata:   map[string]string{ray.MetaRunID: runID, "sagebench_workload": "Q1"}}
}

// submit uploads the driver and the plan, submits the job (attaching to
// it when this run submitted it before) and follows it to its end, its
// log read as it comes. Failures before the driver declared its stages
// ready are *workload.NotStartedError: nothing was sent.
func (q *q1Ray) submit(ctx context.Context, c *ray.Client, env *workload.Env, plan ray.Plan, envVars map[string]any) (ray.Job, ray.Output, error) {
	pb, err := json.Marshal(plan)
	if err != nil {
		return ray.Job{}, ray.Output{}, fmt.Errorf("q1: encoding the Ray plan: %w", err)
	}
	files := raydriver.Files()
	files[ray.PlanFile] = pb
	pkg, err := ray.NewPackage(files)
	if err != nil {
		return ray.Job{}, ray.Output{}, err
	}
	if err := c.Upload(ctx, pkg); err != nil {
		return ray.Job{}, ray.Output{}, notStarted(err)
	}
	spec := jobSpec(plan.RunID, pkg.URI)
	if len(envVars) > 0 {
		spec.RuntimeEnv["env_vars"] = envVars
	}
	id, attached, err := c.Submit(ctx, spec)
	if err != nil {
		if ctx.Err() != nil { // Ctrl-C during the submission: the cluster may have the job already
			stopOrphan(c, spec.SubmissionID)
		}
		return ray.Job{}, ray.Output{}, notStarted(err)
	}
	fmt.Fprintf(env.Log, "q1: ray job %s on %s (attached: %v), %d transactions\n", id, c.Address(), attached, len(plan.Arrivals))
	ps := ray.NewParser(env.Log)
	job, err := c.Await(ctx, id, ray.AwaitOptions{Logs: ps})
	if err != nil && ctx.Err() == nil && !ray.Terminal(job.Status) {
		stopOrphan(c, id) // its records can no longer be read: no job outlives its run
	}
	out, perr := ps.Output()
	switch {
	case !out.Meta.Ready():
		return job, out, notStarted(rayNeverReady(job, out, cmp.Or(ctx.Err(), err)))
	case err != nil && ctx.Err() == nil:
		return job, out, err
	}
	return job, out, perr
}

// rayNeverReady describes a job whose driver never declared its stages
// ready (cause: why the wait ended early, if it did).
func rayNeverReady(job ray.Job, out ray.Output, cause error) error {
	why := fmt.Sprintf("ended %s: %s", job.Status, job.Message)
	if cause != nil {
		why = cause.Error()
	}
	return fmt.Errorf("q1: ray job %s sent no traffic: its driver never declared its stages ready (%s); log tail:\n%s",
		job.SubmissionID, why, lastLines(out.Tail, 5))
}

// stopOrphan stops the job the run may have submitted before it was
// interrupted (its id is deterministic), so no job outlives its run.
func stopOrphan(c *ray.Client, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = c.Stop(ctx, id) // a job that was never created answers 404: nothing to stop
}

// rayFailure describes a job that did not deliver all its records.
func rayFailure(job ray.Job, out ray.Output) error {
	tail := lastLines(out.Tail, 5)
	if job.Status == ray.StatusSucceeded {
		return fmt.Errorf("q1: ray job %s succeeded but its log holds %d records without the driver's end line; log tail:\n%s",
			job.SubmissionID, len(out.Records), tail)
	}
	return fmt.Errorf("q1: ray job %s ended %s: %s; log tail:\n%s", job.SubmissionID, job.Status, job.Message, tail)
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	if lines := strings.Split(strings.TrimRight(s, "\n"), "\n"); len(lines) > n {
		return strings.Join(lines[len(lines)-n:], "\n")
	}
	return s
}

// rayNotes put the cluster into the run's notes: the environment
// manifest of the Ray side and how its stages got ready.
func rayNotes(c *ray.Client, v ray.Version, job ray.Job, out ray.Output) []string {
	host := c.Address()
	if u, err := url.Parse(host); err == nil {
		host = u.Host
	}
	notes := []string{fmt.Sprintf("ray: cluster %s, Ray %s (commit %s, Jobs API %s), job %s %s",
		host, v.RayVersion, v.RayCommit, v.API, job.SubmissionID, job.Status)}
	if m := out.Meta; m != nil {
		keys := make([]string, 0, len(m.ClusterResources))
		for k := range m.ClusterResources {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %g", k, m.ClusterResources[k])
		}
		notes = append(notes, fmt.Sprintf("ray: driver runtime %s, Ray %s; cluster resources: %s", m.Runtime, m.RayVersion, strings.Join(parts, ", ")),
			warmupNote(m))
	}
	notes = append(notes, "ray: offsets use the driver's clock, re-based on its schedule zero; recall@k from the document ids its retrieve stage reported")
	return notes
}

// warmupNote says how the driver's stages got ready before its
// schedule's zero (which it set only then).
func warmupNote(m *ray.Meta) string {
	parts := make([]string, len(m.Warmup.Stages))
	for i, s := range m.Warmup.Stages {
		parts[i] = fmt.Sprintf("%s ready at %s with %d of %d connections warmed", s.Stage, result.FormatValue(s.ReadyMS, result.Ms), s.Warmed, s.Wanted)
		if s.Node != "" {
			parts[i] += " on " + s.Node
		}
	}
	total := record.Millis(time.Duration(m.ReadyUnixNS - m.Warmup.StartedUnixNS))
	return fmt.Sprintf("ray: warm-up before the schedule's zero: stages ready %s after the driver started them (%s); zero %s after readiness",
		result.FormatValue(total, result.Ms), strings.Join(parts, "; "), result.FormatValue(record.Millis(time.Duration(m.StartUnixNS-m.ReadyUnixNS)), result.Ms))
}

// recordRay re-bases the driver's records onto env.Start, applies Q1's
// SLOs, hands them to env.Record and records the arrivals the job never
// reported as cancelled. It returns the phase they make.
func (q *q1Ray) recordRay(env *workload.Env, sched load.Schedule, out ray.Output, questionTokens []int) summary.Phase {
	embed, gen := stageOf(q.cfg.Graph, rag.OpEmbed), stageOf(q.cfg.Graph, rag.OpGenerate)
	var shift int64
	if out.Meta != nil {
		shift = max(out.Meta.StartUnixNS-env.Start.UnixNano(), 0)
	}
	byTxn := map[string][]record.Request{}
	for _, raw := range out.Records {
		var r record.Request
		if json.Unmarshal(raw, &r) != nil || r.TxnID == "" {
			fmt.Fprintf(env.Log, "q1: ray record without a transaction dropped: %.200s\n", raw)
			continue
		}
		rebase(&r, shift)
		if r.Kind == "stage" && r.Stage == gen {
			r.InputTokens = rayPromptTokens(env, raw)
		}
		byTxn[r.TxnID] = append(byTxn[r.TxnID], r)
	}
	phase := summary.Phase{Start: time.Duration(shift), Scheduled: sched.Len(), ScheduleSpan: sched.Span(), End: time.Duration(shift)}
	lastSent := lastSent(byTxn)
	for i, off := range sched.Offsets {
		recs := q.withSLO(byTxn[txnID(i)])
		if len(recs) == 0 || recs[0].Kind != "txn" {
			phase.Interrupted = true
			if shift+int64(off) > lastSent {
				continue // never due before the job stopped: not sent, as on sage
			}
			recs = []record.Request{rayLost(i, shift+int64(off), q.cfg)}
		}
		for _, r := range recs {
			if r.Kind == "stage" && r.Stage == embed && i < len(questionTokens) {
				r.InputTokens = questionTokens[i] // the question, as on sage
			}
			if r.Kind == "txn" {
				r.InputTokens = genInputTokens(recs, gen) // the prompt's, as on sage
			}
			phase.End = max(phase.End, time.Duration(r.EndNS))
			if r.Kind == "txn" && r.SentNS > 0 {
				env.Sent()
			}
			env.Record(r)
		}
	}
	return phase
}

// rayPromptTokens is the length of the messages the driver's generate
// stage sent (its record's "prompt", which requests.jsonl does not keep),
// counted as sage counts its prompt: in the run's tokenizer, rendered
// with its chat template when it has one; 0 without them.
func rayPromptTokens(env *workload.Env, raw json.RawMessage) int {
	var p struct {
		Prompt []openai.Message `json:"prompt"`
	}
	if json.Unmarshal(raw, &p) != nil || len(p.Prompt) == 0 {
		return 0
	}
	return promptTokens(env.Synth(), p.Prompt)
}

// genInputTokens is the input_tokens of the generate stage among recs.
func genInputTokens(recs []record.Request, gen string) int {
	for _, r := range recs {
		if r.Kind == "stage" && r.Stage == gen {
			return r.InputTokens
		}
	}
	return 0
}

// rebase moves every offset of r by shift ns (0 stays "did not happen").
func rebase(r *record.Request, shift int64) {
	for _, p := range []*int64{&r.IntendedNS, &r.SentNS, &r.FirstByte, &r.FirstToken, &r.FirstAnswerToken, &r.EndNS} {
		if *p != 0 {
			*p += shift
		}
	}
	for i := range r.TokenNS {
		r.TokenNS[i] += shift
	}
}

// withSLO orders a transaction's records (txn first, stages as run) and
// sets slo_met as the sage backend does.
func (q *q1Ray) withSLO(recs []record.Request) []record.Request {
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Kind == "txn" && recs[j].Kind != "txn" })
	met := true
	for i := range recs[min(1, len(recs)):] {
		s := &recs[i+1]
		s.SLOMet = s.OK && within(s.E2EMs, q.cfg.SLO.stage(q.stageOp(s.Stage)))
		met = met && s.SLOMet
	}
	if len(recs) > 0 && recs[0].Kind == "txn" {
		recs[0].SLOMet = recs[0].OK && met && within(recs[0].E2EMs, q.cfg.SLO.E2E)
	}
	return recs
}

func (q *q1Ray) stageOp(stage string) string {
	for _, s := range q.cfg.Graph.Stages {
		if s.Name == stage {
			return s.Operator
		}
	}
	return ""
}

// rayLost is the record of an arrival the job never reported.
func rayLost(i int, intended int64, cfg *Config) record.Request {
	id := txnID(i)
	return record.Request{ID: id, Seq: i, Kind: "txn", Type: TypeRAG, TxnID: id, Tenant: cfg.Tenant,
		Model: cfg.LLM.Model, IntendedNS: max(intended, 1), ErrorClass: openai.ClassCanceled,
		Error: "the Ray job stopped before it reported the transaction"}
}

// lastSent is the latest send offset of a reported transaction.
func lastSent(byTxn map[string][]record.Request) int64 {
	var last int64
	for _, recs := range byTxn {
		for _, r := range recs {
			if r.Kind == "txn" {
				last = max(last, r.SentNS)
			}
		}
	}
	return last
}

// DescribeJob renders the job Run would submit for seed, without
// contacting the cluster or the target: the plan's questions come from
// the target's corpus at run time, so the working_dir's URI is known then.
func (q *q1Ray) DescribeJob(seed int64, parallelism int) (string, error) {
	sched, err := load.NewSchedule(q.cfg.Schedule, seed)
	if err != nil {
		return "", fmt.Errorf("q1.%w", err)
	}
	plan := q.rayPlan(parallelism, sched, make([]corpus.Query, sched.Len()), "<run-id>")
	plan.Target = "<the run's target>"
	n := len(plan.Arrivals)
	plan.Arrivals = plan.Arrivals[:min(n, 3)]
	for i := range plan.Arrivals {
		plan.Arrivals[i].Query = "<question from the corpus>"
	}
	spec := jobSpec(plan.RunID, "gcs://_ray_pkg_<sha1 of sagebench_ray.py + plan.json>.zip")
	spec.SubmissionID = ray.SubmissionID("") + "<run-id>"
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err = enc.Encode(struct {
		Address  string      `json:"address"`
		Submit   ray.JobSpec `json:"POST /api/jobs/"`
		Plan     ray.Plan    `json:"plan_json"`
		Arrivals int         `json:"arrivals"`
	}{cmp.Or(q.cluster.Address, "<--ray-address or RAY_ADDRESS: not set>"), spec, plan.Redacted(), n})
	return strings.TrimRight(b.String(), "\n"), err
}
