package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/presenter"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
)

// Runner runs resolved experiments and writes their records.
type Runner struct {
	Out   io.Writer      // progress and summary tables
	Log   io.Writer      // debug lines; nil → discarded
	Start target.Starter // starts the embedded stack; nil when the build has none
	// Live rewrites one progress line in place (a terminal); otherwise a
	// plain line is printed every ProgressEvery (0: no progress lines).
	Live          bool
	ProgressEvery time.Duration
	Env           record.Environment // manifest for run.json
	// Floor is the measurement floor of the experiment being run (from
	// calibrate), recorded in every repetition's run.json and summary.md;
	// nil when the run was not calibrated.
	Floor *record.Floor
	// Dataflow, when set, is handed to the workloads to run their dataflow
	// graphs on another engine (--nodes N); nil: in-process.
	Dataflow workload.DataflowStarter
	// Fleet, when set, starts the nodes that send the workload's
	// open-loop phases (--nodes N for a Q whose load can be sharded);
	// nil: this process sends.
	Fleet FleetStarter
	// InjectDelay slows the client path on purpose: every request waits
	// this long after the driver releases it and before it is sent. Only
	// the floor's own tests use it, to show a slower harness raises the
	// floor by as much.
	InjectDelay time.Duration
	// synths are the prompt synthesizers built so far, by the resolved
	// tokenizer they count in (one Ref per command: the Qs of a command
	// share it, and every repetition builds on it).
	synthMu sync.Mutex
	synths  map[*tokenizer.Ref]*shape.Synth
}

// synth returns the prompt synthesizer of ref (r.Tokenizer), built once.
func (rn *Runner) synth(ref *tokenizer.Ref) (*shape.Synth, error) {
	if ref.Spec() == "" {
		return shape.DefaultSynth(), nil
	}
	tok, err := ref.Get()
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	rn.synthMu.Lock()
	defer rn.synthMu.Unlock()
	if s, ok := rn.synths[ref]; ok {
		return s, nil
	}
	s, err := shape.NewSynth(tok)
	if err != nil {
		return nil, err
	}
	if rn.synths == nil {
		rn.synths = map[*tokenizer.Ref]*shape.Synth{}
	}
	rn.synths[ref] = s
	return s, nil
}

// prompts is r's prompt synthesizer (synth, already built by runOnce)
// fitted to its chat template; nil for the default tokenizer without a
// chat template, whose synthesizer Env.Synth builds at its first use: a
// run that synthesizes no prompt (embeddings only) then never loads a
// vocabulary (~30 ms of CPU and its pages).
func (rn *Runner) prompts(r runconfig.Resolved) *shape.Synth {
	if r.Tokenizer.Spec() == "" && r.Shared.ChatTemplate == "" {
		return nil
	}
	s, _ := rn.synth(r.Tokenizer)
	return rn.templated(s, r.Shared.ChatTemplate)
}

// templated is s fitted to the chat template of file (s when none, or
// when the file, checked by Shared.Validate, has gone since).
func (rn *Runner) templated(s *shape.Synth, file string) *shape.Synth {
	if file == "" || s == nil {
		return s
	}
	tpl, err := chattemplate.Load(file)
	if err != nil {
		fmt.Fprintf(rn.log(), "chat template: %v\n", err)
		return s
	}
	return s.WithTemplate(tpl)
}

// FleetStarter starts the load-generating nodes of a repetition against
// the target at targetURL. finish stops them and returns the notes for
// the records (where the load ran, each node's clock offset and share).
type FleetStarter func(ctx context.Context, targetURL string) (f workload.LoadFleet, finish func() (notes []string, err error), err error)

// ErrInterrupted is returned when ctx was cancelled during a run; the
// records were written with "complete": false.
var ErrInterrupted = errors.New("interrupted")

// NotStartedError marks a failure before a run's traffic began, such as a
// distributed runtime that could not start (cluster unreachable, workers
// that never joined) or a Ray job whose driver never got ready. Nothing
// was measured, so the repetition leaves no run directory: runOnce
// removes the one it created. It is workload's, so that a workload can
// return it too.
type NotStartedError = workload.NotStartedError

// Result is one finished repetition.
type Result struct {
	Dir string
	Run record.Run
}

// Run performs every repetition of r. It stops at the first error or
// interruption; the results of the repetitions done so far are returned.
func (rn *Runner) Run(ctx context.Context, r runconfig.Resolved) ([]Result, error) {
	if r.Tokenizer == nil { // a Resolved not from runconfig.Resolve
		r.Tokenizer = tokenizer.NewRef(r.Shared.Tokenizer)
	}
	var out []Result
	for rep := range r.Shared.Repeat {
		res, err := rn.runOnce(ctx, r, rep)
		if res.Dir != "" {
			out = append(out, res)
		}
		if err != nil {
			return out, err
		}
		if ctx.Err() != nil {
			return out, fmt.Errorf("%s: %w; records in %s say \"complete\": false", r.Spec.ID, ErrInterrupted, res.Dir)
		}
	}
	if err := writeAggregate(rn.Out, r, out); err != nil {
		return out, fmt.Errorf("%s aggregate: %w", r.Spec.ID, err)
	}
	return out, nil
}

func (rn *Runner) log() io.Writer {
	if rn.Log == nil {
		return io.Discard
	}
	return rn.Log
}

// NewRunID returns q<n>-<backend>-<rep>-<8 hex>.
func NewRunID(spec workload.Spec, backend string, rep int) string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%s-%d-%s", spec.Section(), backend, rep, hex.EncodeToString(b[:]))
}

// runOnce does repetition rep: target up, traffic, records, target down.
func (rn *Runner) runOnce(ctx context.Context, r runconfig.Resolved, rep int) (Result, error) {
	opts := target.Options{Start: rn.Start, Seed: r.Shared.Seed + int64(rep), Models: workload.Models(r.Workload),
		Tokenizer: r.Tokenizer, EmbeddingTokenizer: r.EmbeddingTokenizer, ChatTemplate: r.Shared.ChatTemplate}
	if r.Tokenizer.Spec() != "" { // the default one is embedded (shape.DefaultSynth)
		if _, err := rn.synth(r.Tokenizer); err != nil {
			return Result{}, err
		}
	}
	if r.EmbeddingTokenizer != nil {
		if _, err := r.EmbeddingTokenizer.Get(); err != nil {
			return Result{}, fmt.Errorf("embedding_tokenizer: %w", err)
		}
	}
	if sd, ok := r.Workload.(workload.StackDefaults); ok {
		opts.StackYAML = sd.StackYAML()
	}
	t, err := target.Open(ctx, r.Shared.Target, opts)
	if err != nil {
		return Result{}, err
	}
	defer closeTarget(t)
	warmed := 0
	if rn.Fleet == nil { // with a fleet the nodes warm connections of their own
		warmed = warm(ctx, t, r, r.Shared.Seed+int64(rep))
	}
	id := NewRunID(r.Spec, r.Shared.Backend, rep)
	dir := filepath.Join(r.Shared.OutputDir, r.Spec.Section(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, fmt.Errorf("creating the run directory: %w", err)
	}
	run := record.Run{SchemaVersion: record.SchemaVersion, RunID: id, Workload: r.Spec.ID, Name: r.Spec.Name, Entry: r.Spec.Entry,
		Backend: r.Shared.Backend, Repetition: rep, Seed: r.Shared.Seed + int64(rep),
		RunConfig: r.RunConfig, ConfigHash: r.ConfigHash, WorkloadHash: r.WorkloadHash, Target: t.Description(),
		Environment: rn.Env, StartedAt: time.Now(), InvalidReasons: []string{}, MeasurementFloor: rn.Floor}
	run.Environment.LoadAvg1 = record.LoadAverage()
	// A run.json that says "complete": false exists from the start, so a
	// crash never leaves a directory that looks finished.
	if err := record.WriteJSONAtomic(filepath.Join(dir, "run.json"), run); err != nil {
		return Result{}, err
	}
	var tokNotes []string
	if !t.IsEmbedded() {
		if models := workload.ChatModels(r.Workload); len(models) > 0 {
			env := workload.Env{Prompts: rn.prompts(r)}
			tokNotes = tokenizeChecks(ctx, t, env.Synth(), models)
		}
	}
	stopScrape := scrape(ctx, t, dir)
	outcome, col, err := rn.drive(ctx, r, t, &run, dir)
	outcome.Notes = append(outcome.Notes, tokNotes...)
	metricNotes, targetMetrics := stopScrape()
	if ns := (*NotStartedError)(nil); errors.As(err, &ns) {
		return Result{}, removeRunDir(dir, err)
	}
	// A load node lost mid-phase still leaves a record of what ran: its
	// missing requests are failed records, the run is incomplete and the
	// error (naming the node) is returned after the records are written.
	lost := (*workload.NodeLostError)(nil)
	integrity := (*workload.IntegrityError)(nil) // forged or stray records were dropped: written, invalid
	if err != nil && !errors.As(err, &lost) && !errors.As(err, &integrity) {
		return Result{Dir: dir, Run: run}, err
	}
	if integrity != nil && lost == nil {
		err = nil
	}
	run.EndedAt = time.Now()
	outcome = cleanOutcome(t.Redactor(), outcome)
	rn.finish(&run, r, outcome, col, ctx.Err() == nil && lost == nil)
	run.Summary.TargetMetrics = targetMetrics
	if lost != nil {
		run.InvalidReasons = append(run.InvalidReasons, lost.Error())
	}
	if integrity != nil {
		run.InvalidReasons = append(run.InvalidReasons, integrity.Error())
		run.Valid = false
		run.Integrity = &record.Integrity{Rejected: integrity.Rejected, ByReason: integrity.ByReason}
	}
	run.Notes = append(append(outcome.Notes, connNotes(t, warmed, rn.Fleet != nil)...), metricNotes...)
	cleanRun(t.Redactor(), &run)
	if err := writeRecords(dir, r, &run, outcome); err != nil {
		return Result{Dir: dir, Run: run}, err
	}
	presenter.EndTable(rn.Out, presenter.Run{Record: &run, Spec: r.Spec, Phases: outcome.Phases})
	fmt.Fprintf(rn.Out, "records: %s\n", dir)
	if lost != nil {
		return Result{Dir: dir, Run: run}, fmt.Errorf("%w; records in %s say \"complete\": false", err, dir)
	}
	return Result{Dir: dir, Run: run}, nil
}

// removeRunDir removes the directory of a run that never started, and its
// experiment's directory when that is left empty; cause is returned, with
// the directory named if it could not be removed.
func removeRunDir(dir string, cause error) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("%w (and removing %s: %v)", cause, dir, err)
	}
	_ = os.Remove(filepath.Dir(dir)) // fails, as it should, unless empty
	return cause
}

func closeTarget(t *target.Target) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.Close(ctx)
}

// drive runs the workload with requests streamed to requests.jsonl.
func (rn *Runner) drive(ctx context.Context, r runconfig.Resolved, t *target.Target, run *record.Run, dir string) (outcome workload.Outcome, col *summary.Collector, err error) {
	var fleet workload.LoadFleet
	if rn.Fleet != nil {
		f, finish, ferr := rn.Fleet(ctx, t.URL()) // (not err: the deferred function sets the named result)
		if ferr != nil {
			// nothing was sent: the run leaves no directory
			return workload.Outcome{}, nil, &NotStartedError{Err: fmt.Errorf("%s: starting the load nodes: %w", r.Spec.ID, ferr)}
		}
		fleet = f
		defer func() {
			notes, ferr := finish()
			outcome.Notes = append(outcome.Notes, notes...)
			if err == nil && ferr != nil {
				err = fmt.Errorf("%s: stopping the load nodes: %w", r.Spec.ID, ferr)
			}
		}()
	}
	w, err := record.CreateRequestWriter(filepath.Join(dir, "requests.jsonl"), 0)
	if err != nil {
		return workload.Outcome{}, nil, err
	}
	col = summary.NewCollector()
	snk := newSink(col, w, t.Redactor())
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go snk.watch(runCtx, cancel)
	var sent atomic.Int64
	env := &workload.Env{Target: t, RunID: run.RunID, Dataflow: rn.Dataflow, Seed: run.Seed, Repetition: run.Repetition, Parallelism: r.Shared.Parallelism,
		Start: run.StartedAt, Drain: r.Shared.Drain, FineGap: fineGap(r.Shared.Pacer), Log: rn.log(), Record: snk.Record, Load: fleet,
		Prompts: rn.prompts(r), Tokenizer: r.Tokenizer, EmbeddingTokenizer: r.EmbeddingTokenizer,
		Sent: func() {
			sent.Add(1)
			if rn.InjectDelay > 0 {
				time.Sleep(rn.InjectDelay)
			}
		}}
	stop := rn.progress(run.StartedAt, &sent, col, r.Spec.PhaseLabel)
	outcome, err = r.Workload.Run(runCtx, env)
	stop()
	if serr := snk.close(); err == nil && serr != nil {
		err = serr
	}
	if note := snk.output.Note(); note != "" {
		outcome.Notes = append(outcome.Notes, note)
	}
	if t, ok := snk.turns.Table(); ok { // TTFT and ITL by turn index
		outcome.Result.Tables = append(outcome.Result.Tables, t)
	}
	return outcome, col, err
}

// finish fills the summary, the result, validity and completeness of run.
func (rn *Runner) finish(run *record.Run, r runconfig.Resolved, o workload.Outcome, col *summary.Collector, complete bool) {
	sum, reasons := col.Summarize(o.Phases, r.Shared.Validity)
	run.Summary = sum
	run.Phases = phaseRecords(o.Phases)
	run.LoadMode = o.LoadMode
	run.Complete = complete
	if !complete {
		reasons = append(reasons, "run interrupted before it completed")
	}
	if len(o.Phases) == 0 {
		reasons = append(reasons, "no phase ran: "+strings.Join(o.Notes, "; "))
	}
	reasons = append(reasons, o.Invalid...)
	res := completeResult(o.Result, r, sum, complete)
	if err := res.Check(); err != nil {
		reasons = append(reasons, "the result breaks its own model (a bug; please report it): "+strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	run.Result = &res
	run.InvalidReasons = append([]string{}, reasons...)
	run.Valid = len(reasons) == 0
}

// completeResult adds to the Q's result the run-level metrics it does not
// define itself and the verdicts on its targets; a Q that gave no answer
// (interrupted, say) gets one that says so, its primary metric not
// measurable.
func completeResult(res result.Result, r runconfig.Resolved, sum record.Summary, complete bool) result.Result {
	if res.Answer == "" || res.Primary.Name == "" {
		why := "the workload gave no result"
		if !complete {
			why = "the run was interrupted before it completed"
		}
		res = result.New("not answered: "+why, r.Spec.Primary.NotMeasurable(why))
	}
	for _, m := range summary.Metrics(sum) {
		if _, ok := res.Metric(m.Name); !ok {
			res.Metrics = append(res.Metrics, m)
		}
	}
	if t, ok := r.Workload.Config().(workload.Targeted); ok && len(t.Targets()) > 0 {
		res.Targets = result.Judge(res, t.Targets())
	}
	return res
}

// fineGap is the Driver.FineGap of a validated pacer.
func fineGap(pacer string) time.Duration {
	g, _ := load.FineGapOf(pacer) // Shared.Validate refused any other
	return g
}

// phaseRecords are the phases as run.json records them.
func phaseRecords(ps []summary.Phase) []record.Phase {
	out := make([]record.Phase, 0, len(ps))
	for _, p := range ps {
		ph := record.Phase{Name: p.Name, StartMs: record.Millis(p.Start), EndMs: record.Millis(p.End), Scheduled: p.Scheduled,
			ScheduleSpanS: p.ScheduleSpan.Seconds(), Interrupted: p.Interrupted, ClosedLoop: p.ClosedLoop}
		if p.ScheduleSpan > 0 && !p.ClosedLoop {
			ph.OfferedRate = float64(p.Scheduled) / p.ScheduleSpan.Seconds()
		}
		out = append(out, ph)
	}
	return out
}
