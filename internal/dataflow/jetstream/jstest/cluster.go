// Package jstest runs real NATS JetStream server processes for tests: a
// test binary that calls MaybeServe first thing in its TestMain becomes a
// clustered nats-server (built from the module's nats-server dependency)
// when StartCluster3 starts it with EnvServer set. Each server is its own
// process on 127.0.0.1 with free ports and a temporary store, so a test
// can SIGKILL one.
package jstest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// EnvServer makes a test binary a NATS server process (MaybeServe): its
// value is a ServerSpec in JSON.
const EnvServer = "SAGEBENCH_TEST_NATS_SERVER"

// ReadyTimeout bounds a server's start and the cluster's first replicated
// stream (race-instrumented servers on a loaded 2-core machine are slow).
const ReadyTimeout = 30 * time.Second

// ServerSpec is one member of a test cluster.
type ServerSpec struct {
	Name        string `json:"name"`
	Port        int    `json:"port"`
	ClusterPort int    `json:"cluster_port"`
	Routes      string `json:"routes"` // comma-separated nats-route URLs of every member
	StoreDir    string `json:"store_dir"`
}

func (s ServerSpec) options() *server.Options {
	return &server.Options{
		ServerName: s.Name, Host: "127.0.0.1", Port: s.Port,
		JetStream: true, StoreDir: s.StoreDir, NoSigs: true, NoLog: true,
		Cluster: server.ClusterOpts{Name: "sagebench-test", Host: "127.0.0.1", Port: s.ClusterPort},
		Routes:  server.RoutesFromStr(s.Routes),
	}
}

// MaybeServe runs a server and exits when EnvServer is set; otherwise it
// returns at once. Call it first in TestMain.
func MaybeServe() {
	if spec := os.Getenv(EnvServer); spec != "" {
		os.Exit(serve(spec))
	}
}

// serve runs one clustered server until its stdin closes (the test that
// started it ended, or died) or it is killed.
func serve(spec string) int {
	var s ServerSpec
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
	if !srv.ReadyForConnections(ReadyTimeout) {
		fmt.Fprintf(os.Stderr, "server %s: not ready\n", s.Name)
		return 1
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Shutdown()
	srv.WaitForShutdown()
	return 0
}

// FreePort is a free TCP port on 127.0.0.1.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Procs are the server processes of a test cluster by name (n0, n1, n2).
type Procs map[string]*exec.Cmd

// StartCluster3 starts three clustered JetStream servers, each its own
// process (this test binary, which must call MaybeServe), and returns
// them with the comma-separated client URL list once the cluster takes a
// stream with replicas 3. They stop when the test ends.
func StartCluster3(t testing.TB) (Procs, string) {
	t.Helper()
	specs := make([]ServerSpec, 3)
	var routes, urls []string
	for i := range specs {
		specs[i] = ServerSpec{Name: fmt.Sprintf("n%d", i), Port: FreePort(t), ClusterPort: FreePort(t), StoreDir: t.TempDir()}
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", specs[i].ClusterPort))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", specs[i].Port))
	}
	procs := Procs{}
	for _, s := range specs {
		s.Routes = strings.Join(routes, ",")
		procs[s.Name] = startProcess(t, s)
	}
	url := strings.Join(urls, ",")
	waitJetStream(t, url)
	return procs, url
}

func startProcess(t testing.TB, s ServerSpec) *exec.Cmd {
	t.Helper()
	spec, _ := json.Marshal(s)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), EnvServer+"="+string(spec))
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
func waitJetStream(t testing.TB, url string) {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := natsjs.New(nc)
	deadline := time.Now().Add(2 * ReadyTimeout)
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
