package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/fleet"
	"github.com/sagebench/sagebench/internal/run"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/workload"
)

// onNodes reports whether the run spreads over worker nodes.
func onNodes(s runconfig.Shared) bool { return s.Nodes > 1 || s.NATSURL != "" }

// clusterConfig is the cluster of --nodes N / nats_url whose workers
// reach the target at targetURL. The coordinator's lines (its link to the
// server, the run's ID, workers joining or refused) go to log, and on an
// external cluster — where an operator starts the workers by hand — to
// stderr even without -v.
func clusterConfig(s runconfig.Shared, targetURL string, log, stderr io.Writer) (jetstream.ClusterConfig, error) {
	args := []string{"--target", targetURL}
	if k := s.Target.APIKeyEnv; k != "" { // the key travels in the environment, never in arguments
		args = append(args, "--target-api-key-env", k)
	}
	out := log
	if s.NATSURL != "" {
		out = stderr
	}
	var mu sync.Mutex // the engine logs from its subscriptions' goroutines
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "sagebench: "+format+"\n", args...)
	}
	token, err := joinToken(s.JoinTokenFile)
	if err != nil {
		return jetstream.ClusterConfig{}, err
	}
	return jetstream.ClusterConfig{Nodes: s.Nodes, URL: s.NATSURL, Auth: natsAuthFromEnv(), JoinToken: token, Insecure: s.NATSInsecure,
		Engine:     jetstream.Config{Version: workerVersion(), Conn: jetstream.ConnConfig{Logf: logf}, Logf: logf},
		WorkerArgs: args, Spawn: jetstream.SpawnConfig{Stderr: log}}, nil
}

// distributed returns the dataflow starter of --nodes N / nats_url: the
// graph runs on NATS JetStream — an embedded server and N local worker
// processes (`sagebench worker`), or an external cluster whose N workers
// must join — instead of in this process. Nil for one node.
func distributed(s runconfig.Shared, stderr, tell io.Writer) workload.DataflowStarter {
	if !onNodes(s) {
		return nil
	}
	return func(ctx context.Context, g dataflow.Graph, targetURL string) (dataflow.Engine, func() ([]string, error), []string, error) {
		cc, err := clusterConfig(s, targetURL, stderr, tell)
		if err != nil {
			return nil, nil, nil, &run.NotStartedError{Err: err}
		}
		c, err := jetstream.StartCluster(ctx, cc)
		if err != nil { // nothing ran: the run leaves no directory
			return nil, nil, nil, &run.NotStartedError{Err: err}
		}
		if err := c.Deploy(ctx, g); err != nil {
			c.Close()
			return nil, nil, nil, &run.NotStartedError{Err: err}
		}
		stop := func() ([]string, error) { // the engine's counts: in the record, on stderr for bench/netns
			st := c.Engine().Stats()
			counts := engineCounts(st)
			fmt.Fprintln(stderr, "sagebench: "+counts)
			var integrity error
			if st.Rejected > 0 { // forged or altered graph messages were dropped: the run is invalid
				integrity = &workload.IntegrityError{Rejected: int(st.Rejected), ByReason: map[string]int{"unauthenticated": int(st.Rejected)}}
			}
			return []string{counts}, errors.Join(integrity, c.Close())
		}
		return c.Engine(), stop, clusterNotes("dataflow", c.Info()), nil
	}
}

// engineCounts is the one-line account of a distributed run's records:
// what the sink delivered, the duplicates it dropped, the redeliveries.
func engineCounts(s jetstream.Stats) string {
	return fmt.Sprintf("dataflow on NATS JetStream: submitted %d, delivered %d, duplicates dropped at the sink %d, redelivered %d, dead-lettered %d",
		s.Submitted, s.Delivered, s.Duplicates, s.Redelivered, s.DeadLettered)
}

// loadFleet returns the load-node starter of --nodes N / nats_url for a
// Q whose load can be sharded: the same cluster as distributed, opened
// without a graph; its workers send the phases' shards (internal/fleet).
// Nil for one node or another Q.
func loadFleet(spec workload.Spec, s runconfig.Shared, stderr, tell io.Writer) run.FleetStarter {
	if !onNodes(s) || !spec.ShardedLoad {
		return nil
	}
	tail := s.Target.Timeout
	if tail == 0 {
		tail = target.DefaultTimeout
	}
	return func(ctx context.Context, targetURL string) (workload.LoadFleet, func() ([]string, error), error) {
		cc, err := clusterConfig(s, targetURL, stderr, tell)
		if err != nil {
			return nil, nil, err
		}
		c, err := jetstream.StartCluster(ctx, cc)
		if err != nil {
			return nil, nil, err
		}
		if err := c.Open(ctx); err != nil {
			c.Close()
			return nil, nil, err
		}
		eng := c.Engine()
		f, err := fleet.New(ctx, fleet.Config{NC: eng.Conn(), Run: eng.Run(), Nodes: fleet.NodesOf(eng.Workers()),
			Tail: tail + 5*time.Second, Client: fleet.SettingsOf(s.Target), Key: c.RunKey(), Logf: func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }})
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		notes := clusterNotes("load", c.Info())
		return f, func() ([]string, error) {
			notes = append(notes, f.Notes()...)
			var integrity error
			if ie := f.Integrity(); ie != nil {
				integrity = ie
			}
			return notes, errors.Join(f.Err(), integrity, f.Close(), c.Close())
		}, nil
	}
}

func clusterNotes(what string, in jetstream.ClusterInfo) []string {
	where := "an external cluster"
	if in.Embedded {
		where = "an embedded server"
	}
	notes := []string{fmt.Sprintf("%s on NATS JetStream: %s at %s, run %s, %d workers, stream replicas %d, %s storage",
		what, where, in.Server, in.Run, in.Workers, in.Replicas, in.Storage)}
	switch {
	case in.Insecure:
		notes = append(notes, "NATS without credentials (--nats-insecure): anyone who reached the server could read the run's plans and publish into it; records were accepted only when sealed with the run's join-token key")
	case in.Embedded:
		notes = append(notes, "NATS authenticated: the embedded server accepted only this run's generated credentials; records sealed with the join-token key")
	default:
		notes = append(notes, "NATS authenticated with the operator's credentials; records sealed with the join-token key")
	}
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
