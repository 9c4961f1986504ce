package jetstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sagebench/sagebench/internal/dataflow"
)

// ClusterConfig is what `sagebench run --nodes N` asks for: N workers on
// an embedded server with N local worker processes (URL empty), or N
// workers joining from an existing cluster (URL set).
type ClusterConfig struct {
	Nodes int    // workers the run waits for; ≥ 1
	URL   string // "" starts an embedded server and spawns Nodes workers
	Auth  Auth
	// Engine configures the coordinator; its Conn (but for ConnectTimeout
	// and Logf) and RemoteOnly are set by StartCluster. Replicas 0 on an
	// external cluster means 3 when the cluster has three or more servers,
	// else 1.
	Engine Config
	// JoinTimeout bounds the wait for Nodes workers at Deploy; 0 means 30s.
	JoinTimeout time.Duration
	// Spawn overrides how local workers start (Exe, Args, Env, Stderr);
	// its N, URL and Run are filled in. WorkerArgs are appended to the
	// default arguments (e.g. --target URL).
	Spawn      SpawnConfig
	WorkerArgs []string
	// JoinToken is the secret the workers must hold (out of band, never
	// over NATS); "" generates one (JoinToken reports it).
	JoinToken string
	// Insecure allows an outside server without credentials (--nats-insecure).
	Insecure  bool
	generated bool // JoinToken was generated here (announce prints it)
}

// Cluster is a coordinator with its server and workers.
type Cluster struct {
	cfg      ClusterConfig
	srv      *Server // nil for an external cluster
	eng      *Engine
	procs    *Procs
	embedded bool
}

// ClusterInfo is what a run records about where it ran.
type ClusterInfo struct {
	Engine   string       `json:"engine"`   // "jetstream"
	Server   string       `json:"server"`   // URL without credentials
	Embedded bool         `json:"embedded"` // an embedded server this process started
	Run      string       `json:"run"`
	Workers  int          `json:"workers"`  // workers that joined
	Nodes    []WorkerInfo `json:"nodes"`    // who joined, with clock offsets
	Replicas int          `json:"replicas"` // stream replicas
	Storage  string       `json:"storage"`  // memory or file
	// Authenticated says the server required credentials of the run
	// (embedded) or the coordinator gave some; Insecure that an outside
	// server was used without (--nats-insecure).
	Authenticated bool `json:"authenticated"`
	Insecure      bool `json:"insecure,omitempty"`
}

// StartCluster starts (or connects to) the server, creates the
// coordinator engine and, on an embedded server, spawns the workers.
// Call Deploy next, then run the engine; Close tears everything down.
func StartCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	if cfg.Nodes < 1 {
		return nil, fmt.Errorf("nodes %d: must be ≥ 1", cfg.Nodes)
	}
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = 30 * time.Second
	}
	if cfg.JoinToken == "" {
		tok, err := NewJoinToken()
		if err != nil {
			return nil, err
		}
		cfg.JoinToken, cfg.generated = tok, true
	} else if err := CheckJoinToken(cfg.JoinToken); err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, embedded: cfg.URL == ""}
	url, auth := cfg.URL, cfg.Auth
	if c.embedded {
		var err error
		if auth, err = runCredentials(); err != nil {
			return nil, err
		}
		srv, err := StartEmbedded(ctx, ServerConfig{User: auth.User, Password: auth.Password})
		if err != nil {
			return nil, err
		}
		c.srv, url = srv, srv.URL()
	} else if err := CheckAuth(url, auth, cfg.Insecure); err != nil {
		return nil, err
	}
	ec := cfg.Engine
	ec.Conn = ConnConfig{URL: url, Auth: auth, ConnectTimeout: ec.Conn.ConnectTimeout, Logf: ec.Conn.Logf}
	ec.RemoteOnly = true
	if ec.Run == "" {
		ec.Run = NewRunID()
	}
	ec.Key = RunKey(cfg.JoinToken, ec.Run) // the graph's messages are sealed as the load nodes' are
	eng, err := New(ec)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	c.eng = eng
	if !c.embedded && cfg.Engine.Replicas == 0 {
		eng.cfg.Replicas = clusterReplicas(eng.nc)
	}
	if c.embedded {
		sc := cfg.Spawn
		sc.N, sc.URL, sc.Run = cfg.Nodes, url, eng.Run()
		// The run's credentials and join token travel in the workers'
		// environment (not their arguments); other credentials of this
		// process's environment are blanked so these are the ones used.
		sc.Env = append(sc.Env, "NATS_CREDS=", "NATS_NKEY=", "NATS_TOKEN=", "NATS_USER="+auth.User, "NATS_PASSWORD="+auth.Password,
			"SAGEBENCH_JOIN_TOKEN="+cfg.JoinToken)
		if sc.Args == nil {
			sc.Args = append([]string{"worker", "--nats-url", url, "--run", eng.Run(), "--once"}, cfg.WorkerArgs...)
		}
		if c.procs, err = SpawnWorkers(sc); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return c, nil
}

// runCredentials are an embedded server's per-run user and password.
func runCredentials() (Auth, error) {
	pw, err := NewJoinToken()
	if err != nil {
		return Auth{}, err
	}
	return Auth{User: "sagebench", Password: pw}, nil
}

// JoinToken is the run's join token (generated unless given).
func (c *Cluster) JoinToken() string { return c.cfg.JoinToken }

// RunKey is the key the run's records are sealed with.
func (c *Cluster) RunKey() []byte { return RunKey(c.cfg.JoinToken, c.eng.Run()) }

// clusterReplicas is the default stream replicas on an external server:
// 3 when it is one of a cluster of three or more (the streams then survive
// the loss of a server), else 1. The servers are the ones the connection
// knows, given in the URL or announced by the server.
func clusterReplicas(nc *nats.Conn) int {
	if nc.ConnectedClusterName() == "" || len(nc.Servers()) < 3 {
		return 1
	}
	return 3
}

// Engine is the coordinator: Serve, Submit, Results and CloseInput it as
// any dataflow.Engine.
func (c *Cluster) Engine() *Engine { return c.eng }

// Deploy deploys g and waits up to JoinTimeout for Nodes workers.
func (c *Cluster) Deploy(ctx context.Context, g dataflow.Graph) error {
	if err := c.eng.Deploy(ctx, g); err != nil {
		return err
	}
	c.announce("")
	wctx, cancel := context.WithTimeout(ctx, c.cfg.JoinTimeout)
	defer cancel()
	return c.eng.WaitWorkers(wctx, c.cfg.Nodes)
}

// announce tells, on an external cluster, the run's ID and how a worker
// on another host joins it (hint: what such a worker needs, e.g.
// "--target URL"): that is where the operator starts workers by hand.
func (c *Cluster) announce(hint string) {
	if c.embedded {
		return
	}
	if hint != "" {
		hint = " " + hint
	}
	url := c.eng.url()
	c.eng.cfg.Logf("run %s: waiting up to %v for %d worker(s) on %s; on each worker host: sagebench worker --nats-url %s%s --join-token-file FILE (joins any run; --run %s for this one only)",
		c.eng.cfg.Run, c.cfg.JoinTimeout, c.cfg.Nodes, url, url, hint, c.eng.cfg.Run)
	if c.cfg.generated { // printed once, here, for the operator to hand out: never sent over NATS
		c.eng.cfg.Logf("run %s: join token (put it in FILE, mode 600, on each worker host): %s", c.eng.cfg.Run, c.cfg.JoinToken)
	}
}

// Info says where the run ran.
func (c *Cluster) Info() ClusterInfo {
	ec := c.eng.cfg
	storage := "memory"
	if ec.FileStorage {
		storage = "file"
	}
	anon := !c.embedded && c.cfg.Auth.Anonymous() && !HasCredentials(c.cfg.URL)
	return ClusterInfo{Engine: "jetstream", Server: c.eng.url(), Embedded: c.embedded, Run: ec.Run,
		Workers: c.eng.workers.count(), Nodes: c.eng.Workers(), Replicas: ec.Replicas, Storage: storage,
		Authenticated: !anon, Insecure: anon && c.cfg.Insecure}
}

// Procs are the spawned local workers (nil on an external cluster), for
// fault injection.
func (c *Cluster) Procs() *Procs { return c.procs }

// Close stops the spawned workers (SIGTERM, then SIGKILL after 10s), the
// engine's connection and the embedded server.
func (c *Cluster) Close() error {
	var errs []error
	if c.procs != nil {
		errs = append(errs, c.procs.Stop(10*time.Second))
	}
	if c.eng != nil {
		c.eng.Close()
	}
	if c.srv != nil {
		c.srv.Shutdown()
	}
	return errors.Join(errs...)
}
