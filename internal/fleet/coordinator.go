package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// Defaults of a zero Config.
const (
	// DefaultLead is how far ahead of now the start instant is published:
	// enough for every node to hear it (a NATS round trip each).
	DefaultLead = 300 * time.Millisecond
	// DefaultTail is how long after the span records may still come back
	// (a request in flight at the end may take the client's timeout, 60s).
	DefaultTail = 65 * time.Second
	// askTimeout bounds one request to a node (the first start opens the
	// node's target, a health check of up to 5s).
	askTimeout = 10 * time.Second
	// stopMargin is what an interrupted phase waits beyond the drain for
	// the nodes' last records.
	stopMargin = 5 * time.Second
)

// Node is a load-generating node of the fleet.
type Node struct {
	Name    string
	Subject string // its service subject (jetstream.WorkerInfo.Service)
	// Clock is its clock minus the coordinator's; nil when not measured
	// (then 0 is assumed).
	Clock *jetstream.ClockOffset
}

// Config configures a Coordinator. NC, Run and Nodes are required.
type Config struct {
	NC    *nats.Conn
	Run   string // the cluster's run ID: it names the record stream
	Nodes []Node
	Lead  time.Duration // 0: DefaultLead
	Tail  time.Duration // 0: DefaultTail
	// Key is the run key (jetstream.RunKey of the join token and Run):
	// the coordinator seals its requests with it and accepts only records
	// sealed with it. Required.
	Key []byte
	// Client is what the nodes' target clients apply (the run's
	// target.timeout, max_conns …); zero values are the client's defaults.
	Client ClientSettings
	// Log receives one line per phase (per-node counts and lags); nil
	// discards them.
	Logf func(format string, args ...any)
}

// Validate reports the first problem of c.
func (c Config) Validate() error {
	switch {
	case c.NC == nil:
		return errors.New("fleet: a NATS connection is required")
	case c.Run == "":
		return errors.New("fleet: the run ID is required")
	case len(c.Nodes) == 0:
		return errors.New("fleet: at least one node is required")
	case len(c.Key) == 0:
		return errNoKey
	case c.Lead < 0 || c.Tail < 0:
		return errors.New("fleet: lead and tail must be ≥ 0 (0 means the default)")
	}
	for _, n := range c.Nodes {
		if n.Subject == "" {
			return fmt.Errorf("fleet: node %q has no service subject (it serves no load shards)", n.Name)
		}
	}
	return nil
}

// Coordinator runs phases on the fleet (a workload.LoadFleet); phases
// may overlap (each has its own record subject).
type Coordinator struct {
	cfg    Config
	js     natsjs.JetStream
	stream string
	prefix string // record subjects: prefix + phase key
	byName map[string]int

	mu     sync.Mutex
	phases int
	totals []nodeTotal
	notes  []string
	err    error // the first phase the fleet failed to run
	// rejected sums the phases' rejected messages (Integrity).
	rejected workload.IntegrityError
}

type nodeTotal struct {
	scheduled, delivered int
	lags                 []float64
	maxStartLate         time.Duration
}

var _ workload.LoadFleet = (*Coordinator)(nil)

// New creates the run's record stream (SAGEBENCH_<run>_L, in memory).
func New(ctx context.Context, cfg Config) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Lead == 0 {
		cfg.Lead = DefaultLead
	}
	if cfg.Tail == 0 {
		cfg.Tail = DefaultTail
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	js, err := natsjs.New(cfg.NC)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	c := &Coordinator{cfg: cfg, js: js, stream: jetstream.StreamPrefix + cfg.Run + "_L",
		prefix: "sagebench." + cfg.Run + ".l.", byName: map[string]int{}, totals: make([]nodeTotal, len(cfg.Nodes)),
		rejected: workload.IntegrityError{ByReason: map[string]int{}}}
	for k, n := range cfg.Nodes {
		c.byName[n.Name] = k
	}
	// Bounded: a message larger than a record is refused, and so is one
	// that would take the stream past MaxBytes: a node publishes it again
	// after a backoff, by when the coordinator has purged what it read
	// (backpressure; a genuine record is never pushed out), and a
	// flood's excess is dropped.
	_, err = js.CreateStream(ctx, natsjs.StreamConfig{Name: c.stream, Subjects: []string{c.prefix + ">"},
		Storage: natsjs.MemoryStorage, Duplicates: 2 * time.Minute,
		MaxMsgSize: maxRecordMsg, MaxBytes: maxStreamBytes, Discard: natsjs.DiscardNew})
	if err != nil {
		return nil, fmt.Errorf("fleet: creating the record stream %s: %w", c.stream, err)
	}
	return c, nil
}

// Memory bounds of the record path: the stream (consumed messages are
// purged every purgeEvery, see collect), the consumer's buffer and queue.
const (
	maxStreamBytes = 8 << 20
	consumeBytes   = 2 * maxRecordMsg
	consumeQueue   = 64
	purgeEvery     = 1024               // messages read
	purgeBytes     = maxStreamBytes / 4 // or bytes read
)

// Integrity is the messages rejected over every phase so far, nil when
// none was: the run is then invalid (see IntegrityError).
func (c *Coordinator) Integrity() *workload.IntegrityError {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rejected.Rejected == 0 {
		return nil
	}
	return &workload.IntegrityError{Rejected: c.rejected.Rejected, ByReason: maps.Clone(c.rejected.ByReason)}
}

// Close deletes the record stream.
func (c *Coordinator) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.js.DeleteStream(ctx, c.stream); err != nil && !errors.Is(err, natsjs.ErrStreamNotFound) {
		return fmt.Errorf("fleet: deleting the record stream %s: %w", c.stream, err)
	}
	return nil
}

func (c *Coordinator) names() []string {
	out := make([]string, len(c.cfg.Nodes))
	for k, n := range c.cfg.Nodes {
		out[k] = n.Name
	}
	return out
}

// RunLoad runs one phase on the fleet (see workload.LoadFleet). Once a
// phase failed (a node refused its shard or did not answer), every later
// call fails with the same error: Err reports it.
func (c *Coordinator) RunLoad(ctx context.Context, plan workload.LoadPlan, emit func(record.Request)) (workload.LoadReport, error) {
	if err := c.Err(); err != nil {
		return workload.LoadReport{}, err
	}
	rep, err := c.runLoad(ctx, plan, emit)
	if err != nil && ctx.Err() == nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	return rep, err
}

// Err is the error that stopped the fleet, nil when every phase ran.
func (c *Coordinator) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Coordinator) runLoad(ctx context.Context, plan workload.LoadPlan, emit func(record.Request)) (workload.LoadReport, error) {
	c.mu.Lock()
	c.phases++
	key := strconv.Itoa(c.phases)
	c.mu.Unlock()
	subject := c.prefix + key
	shards := Shard(plan, len(c.cfg.Nodes))
	t := newTally(shards)
	msgs, stopConsume, err := c.consume(ctx, subject)
	if err != nil {
		return workload.LoadReport{}, err
	}
	defer stopConsume()
	if err := c.distribute(ctx, key, subject, shards); err != nil {
		c.stopAll(key)
		return workload.LoadReport{}, err
	}
	start := time.Now().Add(c.cfg.Lead)
	if err := c.start(ctx, key, start, plan.Base); err != nil {
		c.stopAll(key)
		return workload.LoadReport{Start: start, End: time.Now(), Interrupted: true}, err
	}
	rep := workload.LoadReport{Start: start}
	rep.Interrupted = c.collect(ctx, key, plan, start, t, msgs, emit)
	rep.End = time.Now()
	c.purge(subject)
	c.account(plan.Phase, t, &rep)
	if name := t.lost(c.names()); name != "" {
		failed := c.emitLost(plan, start, t, emit)
		return rep, &workload.NodeLostError{Node: name, Phase: plan.Phase, Missing: failed}
	}
	return rep, nil
}

// consume reads the phase's record subject from its first message.
func (c *Coordinator) consume(ctx context.Context, subject string) (<-chan natsjs.Msg, func(), error) {
	cons, err := c.js.OrderedConsumer(ctx, c.stream, natsjs.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return nil, nil, fmt.Errorf("fleet: reading %s: %w", subject, err)
	}
	// Bounded: the client buffers at most consumeBytes of messages, the
	// channel consumeQueue more.
	msgs, done := make(chan natsjs.Msg, consumeQueue), make(chan struct{})
	cc, err := cons.Consume(func(m natsjs.Msg) {
		select {
		case msgs <- m:
		case <-done:
		}
	}, natsjs.PullMaxBytes(consumeBytes))
	if err != nil {
		return nil, nil, fmt.Errorf("fleet: reading %s: %w", subject, err)
	}
	return msgs, func() { close(done); cc.Stop() }, nil
}

// distribute sends each node its shard in parts of at most maxPart.
func (c *Coordinator) distribute(ctx context.Context, key, subject string, shards []workload.LoadPlan) error {
	for k, s := range shards {
		parts := max((len(s.Requests)+maxPart-1)/maxPart, 1)
		if parts > maxParts {
			return fmt.Errorf("fleet: phase %s: %d requests for %s exceed what a node takes (%d)", s.Phase, len(s.Requests), c.cfg.Nodes[k].Name, maxParts*maxPart)
		}
		for p := range parts {
			part := s
			part.Requests = s.Requests[p*maxPart : min((p+1)*maxPart, len(s.Requests))]
			req := request{Op: opPlan, Key: key, Subject: subject, Part: p, Parts: parts, Plan: &part, Client: &c.cfg.Client}
			if err := c.ask(ctx, c.cfg.Nodes[k], req); err != nil {
				return fmt.Errorf("fleet: phase %s: handing its shard to %s: %w", s.Phase, c.cfg.Nodes[k].Name, err)
			}
		}
	}
	return nil
}

// start tells every node the start instant and the records' base, each in
// its own clock.
func (c *Coordinator) start(ctx context.Context, key string, start, base time.Time) error {
	for _, n := range c.cfg.Nodes {
		var off time.Duration
		if n.Clock != nil {
			off = n.Clock.Offset
		}
		req := request{Op: opStart, Key: key, StartNS: start.Add(off).UnixNano(), BaseNS: base.Add(off).UnixNano()}
		if err := c.ask(ctx, n, req); err != nil {
			return fmt.Errorf("fleet: starting %s: %w", n.Name, err)
		}
	}
	return nil
}

// stopAll tells every node to cut the phase short (best effort).
func (c *Coordinator) stopAll(key string) {
	b, _ := json.Marshal(request{Op: opStop, Key: key})
	for _, n := range c.cfg.Nodes {
		m := &nats.Msg{Subject: n.Subject, Data: b}
		seal(c.cfg.Key, coordinatorName, m)
		_ = c.cfg.NC.PublishMsg(m)
	}
	_ = c.cfg.NC.Flush()
}

// ask sends req to node n and waits for its reply, trying again while
// nobody listens yet (a worker subscribes just after it joined).
func (c *Coordinator) ask(ctx context.Context, n Node, req request) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if mp := c.cfg.NC.MaxPayload(); mp > 0 && int64(len(b)) > mp {
		return fmt.Errorf("a plan part of %d bytes exceeds the server's max payload %d", len(b), mp)
	}
	deadline := time.Now().Add(askTimeout)
	for {
		rctx, cancel := context.WithDeadline(ctx, deadline)
		out := &nats.Msg{Subject: n.Subject, Data: b}
		seal(c.cfg.Key, coordinatorName, out)
		m, err := c.cfg.NC.RequestMsgWithContext(rctx, out)
		cancel()
		if errors.Is(err, nats.ErrNoResponders) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			return err
		}
		var rep reply
		if err := json.Unmarshal(m.Data, &rep); err != nil {
			return fmt.Errorf("malformed reply: %w", err)
		}
		if rep.Error != "" {
			return errors.New(rep.Error)
		}
		return nil
	}
}

// NodesOf lists the workers that joined a run as the fleet's nodes, in
// join order.
func NodesOf(ws []jetstream.WorkerInfo) []Node {
	out := make([]Node, len(ws))
	for k, w := range ws {
		out[k] = Node{Name: w.Name, Subject: w.Service, Clock: w.Clock}
	}
	return out
}
