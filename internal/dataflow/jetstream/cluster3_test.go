package jetstream_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startCluster3 starts three clustered JetStream servers in this process
// and returns them with the comma-separated client URL list.
func startCluster3(t *testing.T) ([]*server.Server, string) {
	t.Helper()
	routes := []int{freePort(t), freePort(t), freePort(t)}
	var all []string
	for _, p := range routes {
		all = append(all, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	var srvs []*server.Server
	var urls []string
	for i, p := range routes {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: server.RANDOM_PORT,
			JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
			Cluster: server.ClusterOpts{Name: "sagebench-test", Host: "127.0.0.1", Port: p},
			Routes:  server.RoutesFromStr(strings.Join(all, ",")),
		}
		s, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		t.Cleanup(s.Shutdown)
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatalf("server %d not ready", i)
		}
		srvs = append(srvs, s)
		urls = append(urls, s.ClientURL())
	}
	url := strings.Join(urls, ",")
	waitJetStream(t, url)
	return srvs, url
}

// waitJetStream waits until the cluster can create a replicated stream.
func waitJetStream(t *testing.T, url string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := natsjs.New(nc)
	deadline := time.Now().Add(dataflowtest.Timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.CreateStream(ctx, natsjs.StreamConfig{Name: "PROBE", Subjects: []string{"probe"}, Replicas: 3})
		cancel()
		if err == nil {
			_ = js.DeleteStream(context.Background(), "PROBE")
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the 3-server cluster never accepted a replicated stream")
}

// TestServerKilledInCluster: on a 3-server cluster with stream replicas
// 3, one server shut down mid-run costs no record.
func TestServerKilledInCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-server cluster")
	}
	srvs, url := startCluster3(t)
	eng := newEngineURL(t, url, jetstream.Config{RemoteOnly: true, Replicas: 3, FileStorage: true, AckWait: 2 * time.Second})
	if err := eng.Deploy(context.Background(), dataflowtest.Chain(2, 64, "noop", "slow")); err != nil {
		t.Fatal(err)
	}
	w, err := jetstream.NewWorker(jetstream.WorkerConfig{Conn: jetstream.ConnConfig{URL: url}, Run: eng.Run(),
		Registry: dataflowtest.Registry(t, faultOps()), Once: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	go func() { _ = w.Serve(context.Background()) }()
	const n = 300
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	var killed atomic.Bool
	got := drive(t, eng, ids, func(done int) {
		if done == n/3 && killed.CompareAndSwap(false, true) {
			go srvs[0].Shutdown()
		}
	})
	if lost := n - len(got); lost != 0 || !killed.Load() {
		t.Fatalf("lost %d records (server killed: %v)", lost, killed.Load())
	}
	if info := eng.Stats(); info.Delivered != n {
		t.Fatalf("stats %+v", info)
	}
}
