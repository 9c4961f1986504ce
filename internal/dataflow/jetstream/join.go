package jetstream

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/redact"
)

// joinRequest is what a worker sends to join a run.
type joinRequest struct {
	Worker    string   `json:"worker"`
	Version   string   `json:"version"`
	Operators []string `json:"operators"` // the worker's registry
	// Graph, if set, is the graph name the worker was started for.
	Graph string `json:"graph,omitempty"`
	// Discover asks only for the run's manifest (a worker started
	// without --run); the worker joins with a second request.
	Discover bool `json:"discover,omitempty"`
	// Clock is the worker's clock offset from the coordinator's.
	Clock *ClockOffset `json:"clock,omitempty"`
	// Service is the subject of the worker's Service in this run ("":
	// it has none, or it is discovering the run and names it at join).
	Service string `json:"service,omitempty"`
	// Serves says the worker has a Service (set at discovery too, before
	// the run and so its subject are known).
	Serves bool `json:"serves,omitempty"`
	// Proof is the worker's MAC of its name under the run key
	// (joinRequestProof): a sealed run admits only workers holding its
	// join token, so a publisher without it cannot fill the roster.
	Proof string `json:"proof,omitempty"`
}

// joinReply is the coordinator's answer: the run's manifest, or a refusal.
type joinReply struct {
	Refused    string         `json:"refused,omitempty"`
	Over       bool           `json:"over,omitempty"` // the run has ended: wait for the next
	Run        string         `json:"run"`
	Version    string         `json:"version"`
	Graph      dataflow.Graph `json:"graph"`
	MaxDeliver int            `json:"max_deliver"`
	Prefetch   int            `json:"prefetch"`
	AckWait    time.Duration  `json:"ack_wait"`
	// Sealed: the graph's messages are sealed with the run key, so a
	// worker without the join token cannot serve its stages.
	Sealed bool `json:"sealed,omitempty"`
	// Proof (when Sealed) is the coordinator's MAC under the run key over
	// the worker's name: a worker whose join token derives another key
	// leaves before it touches a stream (it would reject every genuine
	// message and seal outputs the sink rejects).
	Proof string `json:"proof,omitempty"`
}

// joinProof is the coordinator's proof, to worker, that it holds key.
func joinProof(key []byte, worker string) string {
	return MAC(key, coordinatorNode, "join", []byte(worker))
}

// joinRequestProof is a worker's proof in its join request: its name
// sealed by itself under the run key.
func joinRequestProof(key []byte, worker string) string {
	return MAC(key, worker, "join-request", []byte(worker))
}

// Bounds of what a join request may name: the roster, the log and the
// run's notes hold them.
const (
	maxWorkerName = 256 // a host name (up to 253) and a pid fit; record.MaxFieldBytes keeps 256
	maxWorkers    = 1024
)

// WorkerInfo describes a joined worker.
type WorkerInfo struct {
	Name    string       `json:"name"`
	Version string       `json:"version"`
	Joined  time.Time    `json:"joined"`
	Clock   *ClockOffset `json:"clock,omitempty"` // nil when not measured
	// Service is where the worker's Service listens ("": none).
	Service string `json:"service,omitempty"`
}

type roster struct {
	mu      sync.Mutex
	workers []WorkerInfo
}

// add admits w, in place of an earlier join under its name (a worker
// that joins again, or a replayed request, is one worker); false when
// the roster is full.
func (r *roster) add(w WorkerInfo) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.IndexFunc(r.workers, func(o WorkerInfo) bool { return o.Name == w.Name }); i >= 0 {
		r.workers[i] = w
		return true
	}
	if len(r.workers) >= maxWorkers {
		return false
	}
	r.workers = append(r.workers, w)
	return true
}

func (r *roster) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.workers)
}

// Workers returns the workers that joined, in order.
func (e *Engine) Workers() []WorkerInfo {
	e.workers.mu.Lock()
	defer e.workers.mu.Unlock()
	return slices.Clone(e.workers.workers)
}

// listen answers join requests (on the run's subject and on the shared
// one, for workers started without --run) and liveness pings.
func (e *Engine) listen(subjects ...string) error {
	for _, subj := range subjects {
		handler := e.onJoin
		switch subj {
		case e.n.pingSubject():
			handler = func(m *nats.Msg) { _ = m.Respond([]byte("ok")) }
		case e.n.clockSubject():
			handler = answerClock(e.cfg.Now)
		}
		s, err := e.nc.Subscribe(subj, handler)
		if err != nil {
			return fmt.Errorf("subscribing to %s: %w", subj, err)
		}
		e.subs = append(e.subs, s)
	}
	return e.nc.Flush()
}

func (e *Engine) onJoin(m *nats.Msg) {
	var req joinRequest
	rep := joinReply{Run: e.cfg.Run, Version: e.cfg.Version, Graph: e.graph, MaxDeliver: e.cfg.MaxDeliver, Prefetch: e.cfg.Prefetch, AckWait: e.cfg.AckWait, Sealed: len(e.cfg.Key) > 0}
	if err := json.Unmarshal(m.Data, &req); err != nil {
		rep.Refused = "malformed join request: " + redact.Clip(err.Error(), 200)
	} else {
		rep.Refused = e.refusal(req)
	}
	if rep.Sealed {
		rep.Proof = joinProof(e.cfg.Key, req.Worker)
	}
	if e.stopCtx.Err() != nil {
		rep.Refused, rep.Over = fmt.Sprintf("run %s is over", e.cfg.Run), true
	}
	refused := rep.Refused != "" && !rep.Over
	if refused { // logged before the answer, so the log is there when the worker hears it
		e.cfg.Logf("refused worker %q: %s", redact.Clip(req.Worker, maxWorkerName), rep.Refused)
	}
	b, _ := json.Marshal(rep)
	_ = m.Respond(b)
	if refused {
		return
	}
	if req.Discover || rep.Refused != "" {
		return
	}
	if !e.workers.add(WorkerInfo{Name: req.Worker, Version: req.Version, Joined: time.Now(), Clock: req.Clock, Service: req.Service}) {
		e.cfg.Logf("worker %q not admitted: run %s has %d workers, the most it takes", req.Worker, e.cfg.Run, maxWorkers)
		return
	}
	clock := "clock offset not measured"
	if c := req.Clock; c != nil {
		clock = fmt.Sprintf("clock offset %s ± %s", c.Offset, c.Uncertainty)
	}
	e.cfg.Logf("worker %q (sagebench %s) joined run %s, %s", req.Worker, req.Version, e.cfg.Run, clock)
}

// refusal says why a worker cannot join, or "".
func (e *Engine) refusal(req joinRequest) string {
	if len(req.Worker) == 0 || len(req.Worker) > maxWorkerName || len(req.Version) > maxWorkerName || !printable(req.Worker) {
		return fmt.Sprintf("a worker name of 1 to %d printable bytes is required (and a version of at most %d)", maxWorkerName, maxWorkerName)
	}
	if len(e.cfg.Key) > 0 && !req.Discover {
		switch {
		case req.Proof == "":
			return fmt.Sprintf("run %s seals its graph with the run key and worker %q has no join token (SAGEBENCH_JOIN_TOKEN or --join-token-file)", e.cfg.Run, req.Worker)
		case VerifyMAC(e.cfg.Key, req.Worker, "join-request", []byte(req.Worker), req.Proof) != nil:
			return fmt.Sprintf("run %s: worker %q's join token is not the run's (its proof does not verify); use the token its coordinator printed", e.cfg.Run, req.Worker)
		}
	}
	if req.Version != e.cfg.Version {
		return fmt.Sprintf("worker %q runs sagebench %s but run %s runs sagebench %s; start workers of the same version",
			req.Worker, req.Version, e.cfg.Run, e.cfg.Version)
	}
	if e.opened.Load() && (!req.Serves || (!req.Discover && req.Service == "")) {
		return fmt.Sprintf("worker %q serves no load shards, which run %s needs; start it with --target URL", req.Worker, e.cfg.Run)
	}
	if req.Graph != "" && req.Graph != e.graph.Name {
		return fmt.Sprintf("worker %q was started for graph %q but run %s runs graph %q",
			req.Worker, req.Graph, e.cfg.Run, e.graph.Name)
	}
	var missing []string
	for _, s := range e.graph.Stages {
		if !slices.Contains(req.Operators, s.Operator) && !slices.Contains(missing, s.Operator) {
			missing = append(missing, s.Operator)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("worker %q lacks operators %s of graph %q (it has: %s)",
			req.Worker, strings.Join(missing, ", "), e.graph.Name, strings.Join(req.Operators, ", "))
	}
	return ""
}

// WaitWorkers blocks until n workers have joined or ctx is done; the error
// then says how many joined and where they were expected.
func (e *Engine) WaitWorkers(ctx context.Context, n int) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for e.workers.count() < n {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d workers to join run %s at %s: %d joined (%w); start them with: sagebench worker --nats-url %s --run %s",
				n, e.cfg.Run, e.url(), e.workers.count(), ctx.Err(), e.url(), e.cfg.Run)
		case <-t.C:
		}
	}
	return nil
}

func (e *Engine) url() string { return Redact(e.nc.ConnectedUrl()) }

// printable reports whether s is printable ASCII without spaces.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
