package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow"
)

// WorkerConfig configures a worker process (sagebench worker).
type WorkerConfig struct {
	Conn ConnConfig
	NC   *nats.Conn // used instead of dialling Conn if set; not closed
	// Run is the run to join (the worker leaves when it ends); "" joins
	// whichever coordinator answers on the shared join subject, run after
	// run.
	Run string
	// Graph, if set, is the graph name this worker expects; a run of
	// another graph refuses it.
	Graph    string
	Version  string // "" means "devel"
	Registry *dataflow.Registry
	Name     string // "" means host:pid
	// Once: leave after one run instead of waiting for the next.
	Once bool
	// JoinToken is the secret shared out of band with the coordinator
	// (never sent over NATS); the run key of its Service derives from it.
	JoinToken string
	// DrainTimeout bounds how long in-flight records may take to finish
	// after ctx is cancelled; 0 means 30s.
	DrainTimeout time.Duration
	Observer     dataflow.Observer
	// Service, if set, is served for the length of every run the worker
	// joins, besides the graph's stages; a run opened without a graph
	// (Engine.Open) admits only workers that have one.
	Service Service
	Now     func() time.Time
	Logf    func(format string, args ...any)
}

// endGrace is how long a worker's last acks may take after its run ended.
const endGrace = 2 * time.Second

// RefusedError is returned when the coordinator refuses the worker.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "refused at join: " + e.Reason }

// Worker serves the stages of runs it joins.
type Worker struct {
	cfg   WorkerConfig
	nc    *nats.Conn
	ownNC bool
	js    natsjs.JetStream
	stats counters
	token string // names this worker's service subject
}

// NewWorker connects to the server.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.Registry == nil {
		return nil, errors.New("worker: registry: required")
	}
	if cfg.Run != "" {
		if err := validRun(cfg.Run); err != nil {
			return nil, fmt.Errorf("worker: %w", err)
		}
	}
	if cfg.Version == "" {
		cfg.Version = "devel"
	}
	if cfg.Name == "" {
		host, _ := os.Hostname()
		cfg.Name = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	w := &Worker{cfg: cfg, nc: cfg.NC, token: NewRunID()}
	if w.nc == nil {
		if cfg.Conn.Name == "" {
			cfg.Conn.Name = "sagebench worker " + cfg.Name
		}
		nc, err := Connect(cfg.Conn)
		if err != nil {
			return nil, err
		}
		w.nc, w.ownNC = nc, true
	}
	js, err := natsjs.New(w.nc)
	if err != nil {
		w.Close()
		return nil, err
	}
	w.js = js
	return w, nil
}

// Close closes the connection if the worker dialled it.
func (w *Worker) Close() {
	if w.ownNC {
		w.nc.Close()
	}
}

// Processed is how many records this worker has served and acked.
func (w *Worker) Processed() int64 { return w.stats.processed.Load() }

// Serve joins runs and serves their stages until ctx is cancelled (then
// it stops pulling, lets in-flight records finish within DrainTimeout
// and returns nil) or, with Once or a Run ID, until that run ends. A
// refusal is a *RefusedError.
func (w *Worker) Serve(ctx context.Context) error {
	for {
		rep, clock, err := w.join(ctx)
		if errors.Is(err, errRunOver) {
			w.cfg.Logf("worker %s: run %s is over", w.cfg.Name, w.cfg.Run)
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := w.serveRun(ctx, rep, clock); err != nil {
			return err
		}
		if w.cfg.Once || w.cfg.Run != "" || ctx.Err() != nil {
			return nil
		}
	}
}

// join asks to join until a coordinator admits or refuses the worker.
// Without a run ID it first discovers the run on the shared subject. It
// measures the clock offset to the coordinator before joining.
func (w *Worker) join(ctx context.Context) (joinReply, *ClockOffset, error) {
	jr := joinRequest{Worker: w.cfg.Name, Version: w.cfg.Version, Operators: w.cfg.Registry.Names(), Graph: w.cfg.Graph,
		Serves: w.cfg.Service != nil}
	for logged := false; ; logged = true {
		run := w.cfg.Run
		if run == "" {
			if !logged {
				w.cfg.Logf("worker %s: waiting for a run on %s", w.cfg.Name, anyJoinSubject)
			}
			jr.Discover = true
			rep, err := w.ask(ctx, anyJoinSubject, jr)
			if errors.Is(err, errRunOver) {
				continue
			}
			if err != nil {
				return rep, nil, err
			}
			run, jr.Discover = rep.Run, false
		} else if !logged {
			w.cfg.Logf("worker %s: waiting for run %s", w.cfg.Name, run)
		}
		n := names{run: run}
		jr.Clock = nil
		if c, err := estimateOffset(ctx, w.nc, n.clockSubject(), 8, w.cfg.Now); err == nil {
			jr.Clock = &c
		}
		if w.cfg.Service != nil {
			jr.Service = n.serviceSubject(w.token)
		}
		jr.Proof = ""
		if w.cfg.JoinToken != "" {
			jr.Proof = joinRequestProof(RunKey(w.cfg.JoinToken, run), w.cfg.Name)
		}
		rep, err := w.ask(ctx, n.joinSubject(), jr)
		if !errors.Is(err, errRunOver) || w.cfg.Run != "" {
			return rep, jr.Clock, err // a named run that is over will not come back
		}
	}
}

// errRunOver: the coordinator answered that its run has ended.
var errRunOver = errors.New("run over")

// askTimeout bounds one join request: on a cluster, a request can go to
// a coordinator that just left (its interest not yet withdrawn across
// the routes) and never be answered, nor refused as "no responders".
const askTimeout = 2 * time.Second

// ask sends a join request to subj until a coordinator answers.
func (w *Worker) ask(ctx context.Context, subj string, jr joinRequest) (joinReply, error) {
	req, _ := json.Marshal(jr)
	for {
		rctx, cancel := context.WithTimeout(ctx, askTimeout)
		m, err := w.nc.RequestWithContext(rctx, subj, req)
		cancel()
		if err == nil {
			var rep joinReply
			switch err := json.Unmarshal(m.Data, &rep); {
			case err != nil:
				return rep, fmt.Errorf("worker: malformed join reply: %w", err)
			case rep.Over:
				return rep, pause(ctx, errRunOver)
			case rep.Refused != "":
				return rep, &RefusedError{Reason: rep.Refused}
			}
			return rep, nil
		}
		if err := pause(ctx, nil); err != nil { // no coordinator yet
			return joinReply{}, err
		}
	}
}

// pause waits a quarter second and returns err, or ctx's error.
func pause(ctx context.Context, err error) error {
	select {
	case <-time.After(250 * time.Millisecond):
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkSealed refuses to serve a sealed run's stages without the run's
// key: with no join token, or one the coordinator's proof does not verify
// under (another run's, or mistyped).
func (w *Worker) checkSealed(rep joinReply) error {
	switch {
	case !rep.Sealed:
		return nil
	case w.cfg.JoinToken == "":
		return fmt.Errorf("worker: run %s seals its graph with the run key and this worker has no join token (SAGEBENCH_JOIN_TOKEN or --join-token-file)", rep.Run)
	case VerifyMAC(RunKey(w.cfg.JoinToken, rep.Run), coordinatorNode, "join", []byte(w.cfg.Name), rep.Proof) != nil:
		return fmt.Errorf("worker: run %s: this worker's join token is not the run's (the coordinator's proof does not verify); use the token its coordinator printed", rep.Run)
	}
	return nil
}

// graphKey is the key the run's graph messages are sealed with: the run
// key when the coordinator seals them, nil (unsealed, unchecked) when it
// does not.
func (w *Worker) graphKey(rep joinReply) []byte {
	if !rep.Sealed {
		return nil
	}
	return RunKey(w.cfg.JoinToken, rep.Run)
}

// serveRun serves one run until its coordinator ends it or stops
// answering, or ctx is cancelled (then it drains).
func (w *Worker) serveRun(ctx context.Context, rep joinReply, clock *ClockOffset) error {
	var ops []dataflow.Operator
	var err error
	if len(rep.Graph.Stages) > 0 {
		if err := w.checkSealed(rep); err != nil {
			return err
		}
		if ops, err = w.cfg.Registry.Build(rep.Graph); err != nil {
			return fmt.Errorf("worker: run %s: %w", rep.Run, err)
		}
	}
	n := names{run: rep.Run}
	fetch, stopFetch := context.WithCancel(context.Background())
	hard, stopHard := context.WithCancel(context.Background())
	defer stopHard()
	// At the end of the run, stop pulling and give the last acks a moment
	// (their server acks may trail the end message) before abandoning.
	end, err := w.nc.Subscribe(n.endSubject(), func(*nats.Msg) { stopFetch(); time.AfterFunc(endGrace, stopHard) })
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer func() { _ = end.Unsubscribe() }()
	go w.watch(ctx, n, stopFetch, stopHard, hard)
	w.cfg.Logf("worker %s: joined run %s (graph %q, %d stages)", w.cfg.Name, rep.Run, rep.Graph.Name, len(rep.Graph.Stages))
	o := &runOpts{js: w.js, n: n, maxDeliver: rep.MaxDeliver, prefetch: max(rep.Prefetch, 1), ackWait: rep.AckWait, now: w.cfg.Now,
		observer: w.cfg.Observer, stats: &w.stats, logf: w.cfg.Logf, key: w.graphKey(rep), node: w.cfg.Name}
	svc := w.startService(fetch, hard, n, clock)
	err = runStages(fetch, hard, o, rep.Graph, ops)
	if len(rep.Graph.Stages) == 0 { // a service run: it lasts until the coordinator ends it
		<-fetch.Done()
	}
	if serr := svc(); err == nil {
		err = serr
	}
	w.cfg.Logf("worker %s: left run %s after %d records", w.cfg.Name, rep.Run, w.stats.processed.Load())
	if err != nil && hard.Err() == nil {
		return err
	}
	return nil
}

// goneAfter is how many pings a second in a row must find no coordinator
// before a worker takes it for gone: longer than a coordinator takes to
// reconnect to another server after its link failed (6-8 s to notice,
// then the reconnect), shorter than a run is worth waiting for.
const goneAfter = 15

// watch ends the run's work when ctx is cancelled (drain, bounded by
// DrainTimeout) or when the coordinator stops answering pings.
func (w *Worker) watch(ctx context.Context, n names, stopFetch, stopHard context.CancelFunc, hard context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	misses := 0
	for {
		select {
		case <-hard.Done():
			return
		case <-ctx.Done():
			w.cfg.Logf("worker %s: draining (up to %s)", w.cfg.Name, w.cfg.DrainTimeout)
			stopFetch()
			select {
			case <-time.After(w.cfg.DrainTimeout):
				stopHard()
			case <-hard.Done():
			}
			return
		case <-t.C:
			if _, err := w.nc.Request(n.pingSubject(), nil, time.Second); err != nil && !strings.Contains(err.Error(), "timeout") {
				misses++
			} else {
				misses = 0
			}
			if misses >= goneAfter {
				w.cfg.Logf("worker %s: coordinator of run %s gone; leaving", w.cfg.Name, n.run)
				stopFetch()
				stopHard()
				return
			}
		}
	}
}

// startService runs the worker's Service for run n until fetch is done;
// the returned function waits for it (at most until hard is done) and
// returns its error.
func (w *Worker) startService(fetch, hard context.Context, n names, clock *ClockOffset) func() error {
	if w.cfg.Service == nil {
		return func() error { return nil }
	}
	done := make(chan error, 1)
	run := ServiceRun{NC: w.nc, Run: n.run, Worker: w.cfg.Name, Subject: n.serviceSubject(w.token), Clock: clock,
		Key: RunKey(w.cfg.JoinToken, n.run)}
	go func() { done <- w.cfg.Service(fetch, run) }()
	return func() error {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("worker: run %s: service: %w", n.run, err)
			}
			return nil
		case <-hard.Done():
			return nil
		}
	}
}
