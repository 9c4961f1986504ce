package jetstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
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

// envServer makes the test binary a NATS server process (see TestMain):
// its value is a serverSpec in JSON.
const envServer = "SAGEBENCH_TEST_NATS_SERVER"

// serverSpec is one member of a test cluster.
type serverSpec struct {
	Name        string `json:"name"`
	Port        int    `json:"port"`
	ClusterPort int    `json:"cluster_port"`
	Routes      string `json:"routes"` // comma-separated nats-route URLs of every member
	StoreDir    string `json:"store_dir"`
}

func (s serverSpec) options() *server.Options {
	return &server.Options{
		ServerName: s.Name, Host: "127.0.0.1", Port: s.Port,
		JetStream: true, StoreDir: s.StoreDir, NoSigs: true, NoLog: true,
		Cluster: server.ClusterOpts{Name: "sagebench-test", Host: "127.0.0.1", Port: s.ClusterPort},
		Routes:  server.RoutesFromStr(s.Routes),
	}
}

// serverMain runs one clustered server until its stdin closes (the test
// that started it ended, or died) or it is killed.
func serverMain(spec string) int {
	var s serverSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, "server spec:", err)
		return 2
	}
	srv, err := server.NewServer(s.options())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go srv.Start()
	if !srv.ReadyForConnections(dataflowtest.Timeout) {
		fmt.Fprintf(os.Stderr, "server %s: not ready\n", s.Name)
		return 1
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Shutdown()
	srv.WaitForShutdown()
	return 0
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// clusterProcs are the server processes of a test cluster by name.
type clusterProcs map[string]*exec.Cmd

// startProcessCluster3 starts three clustered JetStream servers, each its
// own process (this test binary), and returns them with the
// comma-separated client URL list once the cluster takes a stream with
// replicas 3.
func startProcessCluster3(t *testing.T) (clusterProcs, string) {
	t.Helper()
	specs := make([]serverSpec, 3)
	var routes, urls []string
	for i := range specs {
		specs[i] = serverSpec{Name: fmt.Sprintf("n%d", i), Port: freePort(t), ClusterPort: freePort(t), StoreDir: t.TempDir()}
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", specs[i].ClusterPort))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", specs[i].Port))
	}
	procs := clusterProcs{}
	for _, s := range specs {
		s.Routes = strings.Join(routes, ",")
		procs[s.Name] = startServerProcess(t, s)
	}
	url := strings.Join(urls, ",")
	waitJetStream(t, url)
	return procs, url
}

func startServerProcess(t *testing.T, s serverSpec) *exec.Cmd {
	t.Helper()
	spec, _ := json.Marshal(s)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envServer+"="+string(spec))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe() // closed when this test ends: the server leaves
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return cmd
}

// waitJetStream waits until the cluster can create a replicated stream.
func waitJetStream(t *testing.T, url string) {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := natsjs.New(nc)
	deadline := time.Now().Add(2 * dataflowtest.Timeout)
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
	procs, url := startProcessCluster3(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*dataflowtest.Timeout)
	defer cancel()
	c, err := jetstream.StartCluster(ctx, jetstream.ClusterConfig{Nodes: 1, URL: strings.Split(url, ",")[0],
		Engine: jetstream.Config{FileStorage: true, AckWait: 2 * time.Second, Conn: jetstream.ConnConfig{ConnectTimeout: dataflowtest.Timeout / 3, Logf: t.Logf}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eng := c.Engine()
	// (three race-instrumented servers on a loaded machine can take longer
	// than the default 3 s to answer a new connection)
	w, err := jetstream.NewWorker(jetstream.WorkerConfig{Conn: jetstream.ConnConfig{URL: url, ConnectTimeout: dataflowtest.Timeout / 3}, Run: eng.Run(),
		Registry: dataflowtest.Registry(t, faultOps()), Once: true})
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
