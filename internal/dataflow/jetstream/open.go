package jetstream

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/sagebench/sagebench/internal/dataflow"
)

// ServiceGraph is the graph name of a run opened with Open: it has no
// stages; its workers serve their Service (the load shards of `sagebench
// run --nodes N`).
const ServiceGraph = "service"

// Open starts a run without a graph: it refuses streams of crashed runs
// like Deploy, then answers pings, clock requests and joins. Only workers
// that offer a Service may join; they serve it until Close ends the run.
// Deploy and Serve do not apply to an opened engine.
func (e *Engine) Open(ctx context.Context) error {
	e.deployMu.Lock()
	defer e.deployMu.Unlock()
	if e.deployed.Load() || e.opened.Load() {
		return dataflow.ErrDeployed
	}
	if err := e.checkStale(ctx); err != nil {
		return err
	}
	e.graph = dataflow.Graph{Name: ServiceGraph}
	e.opened.Store(true)
	return e.listen(e.n.pingSubject(), e.n.clockSubject(), e.n.joinSubject(), anyJoinSubject)
}

// Conn is the engine's NATS connection (for services of an opened run).
func (e *Engine) Conn() *nats.Conn { return e.nc }

// end tells the workers of an opened run that it is over.
func (e *Engine) end() {
	if !e.opened.Load() {
		return
	}
	e.stopRun()
	_ = e.nc.Publish(e.n.endSubject(), nil)
	_ = e.nc.Flush()
}

// Open opens the coordinator's run without a graph (Engine.Open) and
// waits up to JoinTimeout for Nodes workers offering a service.
func (c *Cluster) Open(ctx context.Context) error {
	if err := c.eng.Open(ctx); err != nil {
		return err
	}
	c.announce("--target URL")
	wctx, cancel := context.WithTimeout(ctx, c.cfg.JoinTimeout)
	defer cancel()
	if err := c.eng.WaitWorkers(wctx, c.cfg.Nodes); err != nil {
		return fmt.Errorf("%w (workers of a load run need --target)", err)
	}
	return nil
}

// Service is what a worker serves for the length of a run besides the
// graph's stages (the load shards of a phase, internal/fleet). It is
// called once per run, after the coordinator admitted the worker, and
// must return soon after ctx is done (the run ended, the coordinator is
// gone, or the worker drains).
type Service func(ctx context.Context, r ServiceRun) error

// ServiceRun is what a Service gets for one run.
type ServiceRun struct {
	NC      *nats.Conn
	Run     string
	Worker  string
	Subject string       // where the coordinator reaches this worker's service
	Clock   *ClockOffset // this worker's clock minus the coordinator's; nil when not measured
	// Key is the run key (RunKey of the worker's join token and Run):
	// the service authenticates what it sends and receives with it. Nil
	// when the worker has no join token.
	Key []byte
}

// serviceSubject is where a worker's service listens in a run.
func (n names) serviceSubject(token string) string { return "sagebench." + n.run + ".svc." + token }
