package jetstream_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
)

// TestClusterEmbedded is the --nodes N path without --nats-url: an
// embedded server, two spawned worker processes (this test binary, see
// TestMain), one run, and what Info records.
func TestClusterEmbedded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), dataflowtest.Timeout)
	defer cancel()
	c, err := jetstream.StartCluster(ctx, jetstream.ClusterConfig{
		Nodes: 2,
		Spawn: jetstream.SpawnConfig{Exe: os.Args[0], Args: []string{"-test.run=^$"}, Stderr: os.Stderr},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := c.Deploy(ctx, dataflowtest.Chain(2, 32, "noop", "slow")); err != nil {
		t.Fatal(err)
	}
	eng := c.Engine()
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	if got := drive(t, eng, ids, func(int) {}); len(got) != len(ids) {
		t.Fatalf("got %d results, want %d", len(got), len(ids))
	}
	info := c.Info()
	if info.Engine != "jetstream" || !info.Embedded || info.Workers != 2 || info.Replicas != 1 || !strings.HasPrefix(info.Server, "nats://127.0.0.1:") {
		t.Fatalf("info %+v", info)
	}
}

// TestClusterExternalWaitsForWorkers: with --nats-url and no workers,
// Deploy gives up after the join timeout saying how to start them.
func TestClusterExternalWaitsForWorkers(t *testing.T) {
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), dataflowtest.Timeout)
	defer cancel()
	c, err := jetstream.StartCluster(ctx, jetstream.ClusterConfig{Nodes: 2, URL: srv.URL(), JoinTimeout: 300 * time.Millisecond, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Deploy(ctx, dataflowtest.Chain(1, 4, "noop"))
	want := fmt.Sprintf("waiting for 2 workers to join run %s at %s: 0 joined", c.Engine().Run(), srv.URL())
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "sagebench worker --nats-url "+srv.URL()+" --run "+c.Engine().Run()) {
		t.Fatalf("Deploy without workers: %v, want %q and the command to start them", err, want)
	}
	if c.Procs() != nil {
		t.Fatal("an external cluster spawned local workers")
	}
	if r := c.Info().Replicas; r != 1 {
		t.Fatalf("stream replicas %d on a single server, want 1", r)
	}
}

// TestNewUnreachable: an unreachable server fails New with the URL named
// and no credentials.
func TestNewUnreachable(t *testing.T) {
	_, err := jetstream.New(jetstream.Config{Conn: jetstream.ConnConfig{URL: "nats://u:secret@127.0.0.1:1"}, Registry: dataflow.NewRegistry()})
	if err == nil || !strings.Contains(err.Error(), "nats://127.0.0.1:1") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("New: %v, want an error naming nats://127.0.0.1:1 without the password", err)
	}
}
