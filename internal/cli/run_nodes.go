package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/run"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/workload"
)

// distributed returns the dataflow starter of --nodes N / nats_url: the
// graph runs on NATS JetStream — an embedded server and N local worker
// processes (`sagebench worker`), or an external cluster whose N workers
// must join — instead of in this process. Nil for one node.
func distributed(s runconfig.Shared, apiKeyEnv string, stderr io.Writer) workload.DataflowStarter {
	if s.Nodes <= 1 && s.NATSURL == "" {
		return nil
	}
	return func(ctx context.Context, g dataflow.Graph, targetURL string) (dataflow.Engine, func() error, []string, error) {
		args := []string{"--target", targetURL}
		if apiKeyEnv != "" { // the key travels in the environment, never in arguments
			args = append(args, "--target-api-key-env", apiKeyEnv)
		}
		logf := func(format string, args ...any) { // the coordinator's disconnections and reconnections
			fmt.Fprintf(stderr, "sagebench: "+format+"\n", args...)
		}
		c, err := jetstream.StartCluster(ctx, jetstream.ClusterConfig{Nodes: s.Nodes, URL: s.NATSURL,
			Auth:       jetstream.Auth{Token: os.Getenv("NATS_TOKEN"), CredsFile: os.Getenv("NATS_CREDS")},
			Engine:     jetstream.Config{Version: workerVersion(), Conn: jetstream.ConnConfig{Logf: logf}},
			WorkerArgs: args, Spawn: jetstream.SpawnConfig{Stderr: stderr}})
		if err != nil { // nothing ran: the run leaves no directory
			return nil, nil, nil, &run.NotStartedError{Err: err}
		}
		if err := c.Deploy(ctx, g); err != nil {
			c.Close()
			return nil, nil, nil, &run.NotStartedError{Err: err}
		}
		stop := func() error { // the engine's counts, for --verbose and bench/netns
			fmt.Fprintln(stderr, engineCounts(c.Engine().Stats()))
			return c.Close()
		}
		return c.Engine(), stop, clusterNotes(c.Info()), nil
	}
}

// engineCounts is the one-line account of a distributed run's records:
// what the sink delivered, the duplicates it dropped, the redeliveries.
func engineCounts(s jetstream.Stats) string {
	return fmt.Sprintf("sagebench: dataflow on NATS JetStream: submitted %d, delivered %d, duplicates dropped at the sink %d, redelivered %d, dead-lettered %d",
		s.Submitted, s.Delivered, s.Duplicates, s.Redelivered, s.DeadLettered)
}

func clusterNotes(in jetstream.ClusterInfo) []string {
	where := "an external cluster"
	if in.Embedded {
		where = "an embedded server"
	}
	notes := []string{fmt.Sprintf("dataflow on NATS JetStream: %s at %s, run %s, %d workers, stream replicas %d, %s storage",
		where, in.Server, in.Run, in.Workers, in.Replicas, in.Storage)}
	var nodes []string
	for _, n := range in.Nodes {
		clock := "clock offset not measured"
		if n.Clock != nil {
			clock = fmt.Sprintf("clock offset %v ± %v", n.Clock.Offset, n.Clock.Uncertainty)
		}
		nodes = append(nodes, fmt.Sprintf("%s (%s)", n.Name, clock))
	}
	if len(nodes) > 0 {
		notes = append(notes, "workers: "+strings.Join(nodes, "; "))
	}
	return notes
}
