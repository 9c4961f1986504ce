package jetstream_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
)

// proxy forwards TCP connections to a server; cut drops the current ones
// (the listener stays, so a client can reconnect).
type proxy struct {
	ln    net.Listener
	to    string
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, to string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, to: to}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.accept()
	return p
}

func (p *proxy) url() string { return "nats://" + p.ln.Addr().String() }

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.to)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(s, c); s.Close() }()
		go func() { _, _ = io.Copy(c, s); c.Close() }()
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestCoordinatorReconnects drops the coordinator's connection mid-run:
// it reconnects and the run completes with every record once.
func TestCoordinatorReconnects(t *testing.T) {
	srv := startServer(t)
	px := startProxy(t, strings.TrimPrefix(srv.URL(), "nats://"))
	eng := newEngineURL(t, px.url(), jetstream.Config{RemoteOnly: true, AckWait: 2 * time.Second, Conn: jetstream.ConnConfig{Logf: t.Logf}})
	if err := eng.Deploy(context.Background(), dataflowtest.Chain(2, 32, "noop", "slow")); err != nil {
		t.Fatal(err)
	}
	w, err := jetstream.NewWorker(jetstream.WorkerConfig{Conn: jetstream.ConnConfig{URL: srv.URL()}, Run: eng.Run(),
		Registry: dataflowtest.Registry(t, faultOps()), Once: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	left := make(chan error, 1)
	go func() { left <- w.Serve(context.Background()) }()
	const n = 300
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	var cuts atomic.Int32
	got := drive(t, eng, ids, func(done int) {
		if done == n/3 && cuts.Add(1) == 1 {
			px.cut()
		}
	})
	if len(got) != n || cuts.Load() != 1 {
		t.Fatalf("got %d results after %d cuts, want %d after 1", len(got), cuts.Load(), n)
	}
	for id, r := range got {
		if r.Err != nil {
			t.Fatalf("%s: %v", id, r.Err)
		}
	}
	if err := <-left; err != nil {
		t.Fatalf("worker: %v", err)
	}
}

func newEngineURL(t testing.TB, url string, cfg jetstream.Config) *jetstream.Engine {
	t.Helper()
	cfg.Conn.URL = url
	eng, err := jetstream.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return eng
}
