package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// Sender sends one shard from this node, request i intended at start +
// its offset, each record to env.Record ((*traffic.Shard).Send).
type Sender func(ctx context.Context, env *workload.Env, shard *traffic.Shard, start time.Time) load.Report

// NodeConfig configures a node: a worker's side of the fleet.
type NodeConfig struct {
	// Target opens the node's target the first time a shard needs it (the
	// worker's --target), with the run's client settings applied to cfg;
	// nil refuses every shard.
	Target func(ctx context.Context, s ClientSettings) (*target.Target, error)
	// Send sends a shard; nil means (*traffic.Shard).Send.
	Send Sender
	// Clock paces the start instant; nil means load.PreciseClock{}.
	Clock load.Clock
	Logf  func(format string, args ...any)
}

// Service returns the jetstream.Service that serves the load shards of
// each run the worker joins.
func (c NodeConfig) Service() jetstream.Service {
	if c.Send == nil {
		c.Send = func(ctx context.Context, env *workload.Env, s *traffic.Shard, start time.Time) load.Report {
			return s.Send(ctx, env, start)
		}
	}
	if c.Clock == nil {
		c.Clock = load.PreciseClock{}
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return func(ctx context.Context, r jetstream.ServiceRun) error {
		js, err := natsjs.New(r.NC, natsjs.WithPublishAsyncMaxPending(8192))
		if err != nil {
			return err
		}
		n := &node{cfg: c, run: r, js: js, shards: map[string]*shard{}}
		sub, err := r.NC.Subscribe(r.Subject, func(m *nats.Msg) { n.handle(ctx, m) })
		if err != nil {
			return fmt.Errorf("load service: subscribing to %s: %w", r.Subject, err)
		}
		<-ctx.Done()
		_ = sub.Unsubscribe()
		n.wg.Wait() // phases under way drain (their ctx is ctx)
		n.closeTarget()
		return nil
	}
}

// node serves the shards of one run.
type node struct {
	cfg    NodeConfig
	run    jetstream.ServiceRun
	js     natsjs.JetStream
	mu     sync.Mutex
	shards map[string]*shard
	tgt    *target.Target
	synths map[string]*shape.Synth // by tokenizer spec and SHA-256
	// embedToks are the embedding tokenizers loaded, by spec and SHA-256.
	embedToks map[string]tokenizer.Tokenizer
	wg        sync.WaitGroup
	// finished are the phases this node ran: a replayed plan or start of
	// one is refused.
	finished map[string]bool
	rejected atomic.Int64 // requests dropped unauthenticated
}

// shard is a phase's shard as its parts arrive, then while it runs.
type shard struct {
	subject  string
	parts    []*workload.LoadPlan
	prepared *traffic.Shard // decoded and compiled once whole, before the start
	cancel   context.CancelFunc
}

// handle answers a coordinator request sealed with the run key; any
// other message is counted and dropped unanswered (a node without a key
// answers that it has none).
func (n *node) handle(ctx context.Context, m *nats.Msg) {
	if len(n.run.Key) == 0 {
		b, _ := json.Marshal(reply{Error: fmt.Sprintf("node %s has no join token: start it with --join-token-file (or SAGEBENCH_JOIN_TOKEN)", n.run.Worker)})
		_ = m.Respond(b)
		return
	}
	if from, err := opened(n.run.Key, m.Subject, m.Header, m.Data); err != nil || from != coordinatorName {
		if n.rejected.Add(1) == 1 {
			n.cfg.Logf("node %s: dropping a request not sealed by the run's coordinator (someone without the join token publishes on %s)", n.run.Worker, m.Subject)
		}
		return
	}
	if rep, ok := n.answer(ctx, m.Data); ok {
		b, _ := json.Marshal(rep)
		_ = m.Respond(b)
	}
}

// answer carries out one coordinator request; ok is false for a stop,
// which has no reply.
func (n *node) answer(ctx context.Context, data []byte) (rep reply, ok bool) {
	var req request
	err := json.Unmarshal(data, &req)
	if err == nil {
		switch req.Op {
		case opPlan:
			err = n.plan(ctx, req)
		case opStart:
			err = n.start(ctx, req)
		case opStop:
			n.stop(req.Key)
			return rep, false
		case opPing:
		default:
			err = fmt.Errorf("unknown operation %q", req.Op)
		}
	}
	if err != nil {
		rep.Error = fmt.Sprintf("node %s: %v", n.run.Worker, err)
	}
	return rep, true
}

// plan stores one part of a shard (a part sent again replaces itself).
// Once the shard is whole, the node opens its target and warms the
// connections the shard needs, before it acknowledges the last part: the
// coordinator publishes the start instant only after that.
func (n *node) plan(ctx context.Context, req request) error {
	if req.Plan == nil || req.Parts < 1 || req.Parts > maxParts || req.Part < 0 || req.Part >= req.Parts || req.Subject == "" {
		return errors.New("malformed plan part")
	}
	if !n.store(req) {
		return fmt.Errorf("phase %s: part %d of %d does not fit the shard", req.Key, req.Part, req.Parts)
	}
	plan, _, err := n.assemble(req.Key)
	if err != nil {
		return nil // more parts to come
	}
	synth, err := n.prompts(plan)
	if err != nil {
		return err
	}
	prepared, err := traffic.PrepareShard(plan, synth.Tokenizer())
	if err != nil {
		return err
	}
	n.mu.Lock()
	if s := n.shards[req.Key]; s != nil {
		s.prepared = prepared
	}
	n.mu.Unlock()
	var s ClientSettings
	if req.Client != nil {
		s = *req.Client
	}
	tgt, err := n.target(ctx, s)
	if err != nil {
		return err
	}
	tgt.Client().Warm(ctx, warmConns(plan))
	return nil
}

// store keeps a part of a shard (a part sent again replaces itself).
func (n *node) store(req request) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.shards[req.Key]
	if n.finished[req.Key] {
		return false // a replay of a phase already run
	}
	if s == nil {
		s = &shard{subject: req.Subject, parts: make([]*workload.LoadPlan, req.Parts)}
		n.shards[req.Key] = s
	}
	if len(s.parts) != req.Parts || s.cancel != nil {
		return false
	}
	s.parts[req.Part] = req.Plan
	return true
}

// start checks the shard is whole and runs it from req's start instant.
func (n *node) start(ctx context.Context, req request) error {
	plan, s, err := n.assemble(req.Key)
	if err != nil {
		return err
	}
	tgt, err := n.target(ctx, ClientSettings{}) // opened when the shard was whole
	if err != nil {
		return err
	}
	synth, err := n.prompts(plan) // loaded when the shard was whole
	if err != nil {
		return err
	}
	embed, err := n.embedTokenizer(plan)
	if err != nil {
		return err
	}
	n.mu.Lock()
	prepared := s.prepared
	n.mu.Unlock()
	if prepared == nil {
		return fmt.Errorf("phase %s: the shard was not prepared", req.Key)
	}
	pctx, cancel := context.WithCancel(ctx)
	n.mu.Lock()
	s.cancel = cancel
	n.mu.Unlock()
	n.wg.Go(func() {
		defer cancel()
		n.runShard(pctx, req, s.subject, prepared, &workload.Env{Target: tgt, Prompts: synth, Tokenizer: tokenizer.RefOf(plan.Tokenizer, synth.Tokenizer()),
			EmbeddingTokenizer: embed})
		n.mu.Lock()
		delete(n.shards, req.Key)
		if n.finished == nil {
			n.finished = map[string]bool{}
		}
		n.finished[req.Key] = true
		n.mu.Unlock()
	})
	return nil
}

// assemble joins the parts of a shard; every part must be there.
func (n *node) assemble(key string) (workload.LoadPlan, *shard, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.shards[key]
	if s == nil {
		return workload.LoadPlan{}, nil, fmt.Errorf("phase %s: no plan received", key)
	}
	if s.cancel != nil {
		return workload.LoadPlan{}, nil, fmt.Errorf("phase %s: already started", key)
	}
	var plan workload.LoadPlan
	for i, p := range s.parts {
		if p == nil {
			return plan, nil, fmt.Errorf("phase %s: part %d of %d missing", key, i, len(s.parts))
		}
		if i == 0 {
			plan = *p
			plan.Requests = nil
		}
		plan.Requests = append(plan.Requests, p.Requests...)
	}
	return plan, s, nil
}

func (n *node) stop(key string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s := n.shards[key]; s != nil && s.cancel != nil {
		s.cancel()
	}
}

// target opens the node's target once, with the settings of the first
// shard that needs it.
func (n *node) target(ctx context.Context, s ClientSettings) (*target.Target, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.tgt != nil {
		return n.tgt, nil
	}
	if n.cfg.Target == nil {
		return nil, errors.New("this worker has no target; start it with --target URL")
	}
	t, err := n.cfg.Target(ctx, s)
	if err != nil {
		return nil, err
	}
	n.tgt = t
	return t, nil
}

func (n *node) closeTarget() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.tgt != nil {
		n.tgt.Close(context.Background())
		n.tgt = nil
	}
}

// prompts returns the prompt synthesizer of the plan's tokenizer, built
// once per spec: an embedded vocabulary, or a tokenizer.json at the same
// path as on the coordinator and with the same SHA-256.
func (n *node) prompts(plan workload.LoadPlan) (*shape.Synth, error) {
	if plan.ChatTemplate == nil {
		return n.synth(plan)
	}
	key := templateKey(plan)
	n.mu.Lock()
	s := n.synths[key]
	n.mu.Unlock()
	if s != nil {
		return s, nil
	}
	plain, err := n.synth(plan)
	if err != nil {
		return nil, err
	}
	tpl, err := plan.ChatTemplate.Parse()
	if err != nil {
		return nil, err
	}
	return n.remember(key, plain.WithTemplate(tpl)), nil
}

// remember caches s under key and returns it.
func (n *node) remember(key string, s *shape.Synth) *shape.Synth {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.synths == nil {
		n.synths = map[string]*shape.Synth{}
	}
	n.synths[key] = s
	return s
}

// templateKey keys the synthesizer of plan's tokenizer and template.
func templateKey(plan workload.LoadPlan) string {
	sum := sha256.Sum256([]byte(plan.ChatTemplate.Jinja + "\x00" + plan.ChatTemplate.BOS + "\x00" + plan.ChatTemplate.EOS))
	return plan.Tokenizer + "\x00" + plan.TokenizerSHA256 + "\x00" + hex.EncodeToString(sum[:])
}

// synth is the prompt synthesizer of plan's tokenizer (no template),
// built once.
func (n *node) synth(plan workload.LoadPlan) (*shape.Synth, error) {
	if plan.Tokenizer == "" {
		return shape.DefaultSynth(), nil
	}
	key := plan.Tokenizer + "\x00" + plan.TokenizerSHA256
	n.mu.Lock()
	s := n.synths[key]
	n.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := loadSynth(plan.Tokenizer, plan.TokenizerSHA256)
	if err != nil {
		return nil, err
	}
	return n.remember(key, s), nil
}

// loadSynth loads the tokenizer spec names, refusing a file whose SHA-256
// is not sum, and builds its prompt synthesizer.
func loadSynth(spec, sum string) (*shape.Synth, error) {
	tok, err := tokenizer.LoadVerified(spec, sum)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("the run's tokenizer is not on this worker (%w): copy it to the same path on every worker", err)
	case errors.Is(err, tokenizer.ErrMismatch):
		return nil, fmt.Errorf("tokenizer %s differs from the coordinator's (%w): copy the run's file to the same path on every worker", spec, err)
	case err != nil:
		return nil, err
	}
	return shape.NewSynth(tok)
}

// warmConns is how many connections a shard needs open before its start,
// sized like the run's own warm-up (openai.WarmConns of its rate).
func warmConns(plan workload.LoadPlan) int {
	rate := 0.0
	if plan.Span > 0 {
		rate = float64(len(plan.Requests)) / plan.Span.Seconds()
	}
	return openai.WarmConns(rate)
}

// runShard waits for the start instant, sends the shard, makes sure
// every record is stored and publishes the done message.
//
// env carries the node's target and prompts; the rest is filled here.
func (n *node) runShard(ctx context.Context, req request, subject string, sh *traffic.Shard, env *workload.Env) {
	pub := &publisher{js: n.js, subject: subject, node: n.run.Worker, key: n.run.Key}
	env.Start, env.Drain, env.Log = time.Unix(0, req.BaseNS), sh.Drain(), io.Discard
	env.Record, env.Sent = pub.add, func() {}
	done := doneMsg{Node: n.run.Worker}
	start := time.Unix(0, req.StartNS)
	if err := n.cfg.Clock.SleepUntil(ctx, start); err != nil {
		done.Interrupted = true
	} else {
		rep := n.cfg.Send(ctx, env, sh, start)
		done.Interrupted = rep.Interrupted
		if !rep.Start.IsZero() {
			done.StartLate = rep.Start.Sub(start)
		}
		n.cfg.Logf("phase %s: sent %d of %d requests, dispatch lag p99 %v", sh.Phase(), rep.Dispatched, sh.Len(), rep.DispatchLag.P99)
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	count, err := pub.flush(fctx)
	if err != nil && done.Error == "" {
		done.Error = err.Error()
	}
	done.Records = count
	b, _ := json.Marshal(done)
	m := nats.NewMsg(subject)
	m.Header.Set(hdrKind, kindDone)
	m.Data = b
	seal(n.run.Key, n.run.Worker, m)
	if err := publishSync(fctx, n.js, m); err != nil {
		n.cfg.Logf("phase %s: publishing done: %v", sh.Phase(), err)
	}
}

// embedTokenizer is plan's embedding tokenizer (nil: none), verified
// against the coordinator's SHA-256 and loaded once per node.
func (n *node) embedTokenizer(plan workload.LoadPlan) (*tokenizer.Ref, error) {
	if plan.EmbeddingTokenizer == "" {
		return nil, nil
	}
	key := plan.EmbeddingTokenizer + "\x00" + plan.EmbeddingTokenizerSHA256
	n.mu.Lock()
	defer n.mu.Unlock()
	if tok, ok := n.embedToks[key]; ok {
		return tokenizer.RefOf(plan.EmbeddingTokenizer, tok), nil
	}
	tok, err := tokenizer.LoadVerified(plan.EmbeddingTokenizer, plan.EmbeddingTokenizerSHA256)
	if err != nil {
		return nil, fmt.Errorf("embedding_tokenizer on this worker: %w (copy the run's file to the same path on every worker)", err)
	}
	if n.embedToks == nil {
		n.embedToks = map[string]tokenizer.Tokenizer{}
	}
	n.embedToks[key] = tok
	return tokenizer.RefOf(plan.EmbeddingTokenizer, tok), nil
}
