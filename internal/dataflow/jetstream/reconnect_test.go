package jetstream_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
)

// proxy forwards TCP connections to a server; cut drops the current ones,
// silence stops forwarding on them without closing them (a link gone
// dark: no RST, no FIN). The listener stays, so a client can reconnect.
type proxy struct {
	ln    net.Listener
	to    string
	mu    sync.Mutex
	conns []net.Conn
	dark  []*atomic.Bool
	down  atomic.Bool // refuse new connections
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
		if p.down.Load() {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.to)
		if err != nil {
			c.Close()
			continue
		}
		dark := new(atomic.Bool)
		p.mu.Lock()
		p.conns, p.dark = append(p.conns, c, s), append(p.dark, dark)
		p.mu.Unlock()
		go forward(s, c, dark)
		go forward(c, s, dark)
	}
}

// forward copies src to dst, dropping what it reads once dark is set.
func forward(dst, src net.Conn, dark *atomic.Bool) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !dark.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// outage cuts the connections and refuses new ones for d, so the
// coordinator is gone from the server for that long.
func (p *proxy) outage(d time.Duration) {
	p.down.Store(true)
	p.cut()
	time.AfterFunc(d, func() { p.down.Store(false) })
}

func (p *proxy) silence() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range p.dark {
		d.Store(true)
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

// TestCoordinatorReconnects breaks the coordinator's connection mid-run,
// by a reset (cut) or by a link gone dark (silence: only the client's
// pings can tell): it reconnects and the run completes with every record
// once.
func TestCoordinatorReconnects(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(*proxy)
	}{
		{"cut", (*proxy).cut},
		{"silent", (*proxy).silence},
		// the workers hear "no responders" to their pings for 5 s and
		// must not take the coordinator for gone
		{"outage-5s", func(p *proxy) { p.outage(5 * time.Second) }},
	} {
		t.Run(tc.name, func(t *testing.T) { coordinatorFault(t, tc.fault) })
	}
}

func coordinatorFault(t *testing.T, fault func(*proxy)) {
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
	var faults atomic.Int32
	got := drive(t, eng, ids, func(done int) {
		if done == n/3 && faults.Add(1) == 1 {
			fault(px)
		}
	})
	if len(got) != n || faults.Load() != 1 {
		t.Fatalf("got %d results after %d faults, want %d after 1", len(got), faults.Load(), n)
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

// TestHasCredentials: user info is found in any of the comma-separated
// URLs, and a list with spaces after its commas carries none.
func TestHasCredentials(t *testing.T) {
	for _, tc := range []struct {
		name, url string
		want      bool
	}{
		{"one plain", "nats://127.0.0.1:4222", false},
		{"list with spaces", "nats://a:4222, nats://b:4222", false},
		{"user and password", "nats://u:p@127.0.0.1:4222", true},
		{"token in the second", "nats://a:4222, nats://tok@b:4222", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jetstream.HasCredentials(tc.url); got != tc.want {
				t.Errorf("HasCredentials(%q) = %v, want %v", tc.url, got, tc.want)
			}
		})
	}
}
