package jetstream

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/sagebench/sagebench/internal/dataflow"
)

// Config configures the coordinator side of a run on JetStream. The zero
// value plus Conn.URL (or NC) and Registry is a working single-process
// engine: it serves every stage itself, like dataflow.Local, and worker
// processes that join add capacity.
type Config struct {
	Conn ConnConfig
	// NC, if set, is used instead of dialling Conn; the engine does not
	// close it.
	NC *nats.Conn
	// Run names the run's streams and subjects; "" picks a random ID.
	Run string
	// Key is the run key (RunKey of the join token and Run): every
	// message of the graph is sealed with it (sender and MAC) and one that
	// does not verify is rejected — counted in Stats.Rejected, never
	// processed. Nil leaves the graph's messages unsealed (a run in one
	// process); StartCluster sets it.
	Key []byte
	// Version is this sagebench's version; a worker of another version
	// is refused at join. "" means "devel".
	Version string
	// Registry builds the operators this process serves; it may be nil
	// with RemoteOnly.
	Registry *dataflow.Registry
	// RemoteOnly: this process serves no stage; joined workers do all
	// the work (sagebench run --nodes N).
	RemoteOnly bool
	// Replicas of every stream (1, or 3 on a 3-server cluster); 0 means 1.
	Replicas int
	// FileStorage stores streams on disk instead of in memory, so that
	// a restarted server keeps them.
	FileStorage bool
	// AckWait is how long a delivery may go without an ack or an
	// InProgress before it is redelivered; 0 means 30s.
	AckWait time.Duration
	// MaxDeliver is how many deliveries a record gets at one stage before
	// it is dead-lettered; 0 means 5.
	MaxDeliver int
	// Prefetch is how many messages each stage worker buffers ahead; 0
	// means 32. A buffered message counts as delivered: when a worker
	// dies, its buffered records use up one of their MaxDeliver
	// deliveries each.
	Prefetch int
	// CleanStale deletes streams left behind by crashed runs; without it
	// Deploy refuses with *StaleStreamsError.
	CleanStale bool
	// KeepStreams leaves the run's streams on the server after Serve
	// (for inspection); by default they are deleted.
	KeepStreams bool
	// ResultsCapacity bounds the results stream and channel; 0 means
	// dataflow.DefaultQueueCapacity.
	ResultsCapacity int
	// Observer sees an Event per record per stage served in this process.
	Observer dataflow.Observer
	// Now is the clock for hop times; nil means time.Now. Across machines
	// hop times come from each machine's clock.
	Now func() time.Time
	// Logf receives progress lines (workers joining, dead letters); nil
	// discards them.
	Logf func(format string, args ...any)
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.NC == nil && c.Conn.URL == "" {
		errs = append(errs, errors.New("nats url: required (nats://host:port)"))
	}
	if c.Run != "" {
		if err := validRun(c.Run); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Registry == nil && !c.RemoteOnly {
		errs = append(errs, errors.New("registry: required unless RemoteOnly"))
	}
	if c.Replicas < 0 || c.Replicas > 5 {
		errs = append(errs, fmt.Errorf("replicas %d: must be 1-5 (0 means 1)", c.Replicas))
	}
	if c.AckWait < 0 || c.MaxDeliver < 0 || c.ResultsCapacity < 0 || c.Prefetch < 0 {
		errs = append(errs, errors.New("ack wait, max deliver, prefetch and results capacity must be ≥ 0 (0 means the default)"))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Run == "" {
		c.Run = NewRunID()
	}
	if c.Version == "" {
		c.Version = "devel"
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.AckWait == 0 {
		c.AckWait = 30 * time.Second
	}
	if c.Prefetch == 0 {
		c.Prefetch = 32
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = 5
	}
	if c.ResultsCapacity == 0 {
		c.ResultsCapacity = dataflow.DefaultQueueCapacity
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return c
}

// backoff is the consumer's redelivery schedule: AckWait, then doubling.
func backoff(ackWait time.Duration, maxDeliver int) []time.Duration {
	out := make([]time.Duration, 0, maxDeliver)
	d := ackWait
	for range maxDeliver {
		out = append(out, d)
		d = min(2*d, 4*ackWait)
	}
	return out
}
