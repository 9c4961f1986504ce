package jetstream_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream/jstest"
)

// streamLeader names the server leading stream on the cluster at url.
func streamLeader(url, stream string) (string, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	js, _ := natsjs.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	info := s.CachedInfo()
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return "", fmt.Errorf("stream %s has no leader", stream)
	}
	return info.Cluster.Leader, nil
}

// TestServerProcessKilledInCluster: on a 3-server cluster, each server
// its own process, the coordinator given one server's URL (as `run
// --nats-url` is) defaults to stream replicas 3; the server leading the
// first stage's stream is SIGKILLed a third of the way through the run:
// the run completes with every record once.
func TestServerProcessKilledInCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-process NATS cluster")
	}
	procs, url := jstest.StartCluster3(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*dataflowtest.Timeout)
	defer cancel()
	c, err := jetstream.StartCluster(ctx, jetstream.ClusterConfig{Nodes: 1, URL: strings.Split(url, ",")[0], Insecure: true,
		Engine: jetstream.Config{FileStorage: true, AckWait: 2 * time.Second, Conn: jetstream.ConnConfig{ConnectTimeout: dataflowtest.Timeout / 3, Logf: t.Logf}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eng := c.Engine()
	// (three race-instrumented servers on a loaded machine can take longer
	// than the default 3 s to answer a new connection)
	w, err := jetstream.NewWorker(jetstream.WorkerConfig{Conn: jetstream.ConnConfig{URL: url, ConnectTimeout: dataflowtest.Timeout / 3}, Run: eng.Run(),
		Registry: dataflowtest.Registry(t, faultOps()), Once: true, JoinToken: c.JoinToken()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	go func() { _ = w.Serve(context.Background()) }()
	if err := c.Deploy(ctx, dataflowtest.Chain(2, 64, "noop", "slow")); err != nil {
		t.Fatal(err)
	}
	if r := c.Info().Replicas; r != 3 {
		t.Fatalf("stream replicas %d on a 3-server cluster, want 3 by default", r)
	}
	leader, err := streamLeader(url, jetstream.StreamPrefix+eng.Run()+"_S0")
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	var killed atomic.Bool
	got := driveWithin(t, 3*dataflowtest.Timeout, eng, ids, func(done int) {
		if done == n/3 && killed.CompareAndSwap(false, true) {
			if err := procs[leader].Process.Kill(); err != nil {
				t.Errorf("kill %s: %v", leader, err)
			}
		}
	})
	if lost := n - len(got); lost != 0 || !killed.Load() {
		t.Fatalf("lost %d records (server %s killed: %v)", lost, leader, killed.Load())
	}
	s := eng.Stats()
	t.Logf("killed %s (leader of the first stage's stream): delivered %d, duplicates dropped at the sink %d, dropped by the streams %d, redelivered %d",
		leader, s.Delivered, s.Duplicates, s.StreamDuplicates, s.Redelivered)
	if s.Delivered != n || s.InFlight != 0 {
		t.Fatalf("stats %+v", s)
	}
}
