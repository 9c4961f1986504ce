package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/fleet"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/rag"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/spf13/cobra"
)

// Environment variables a worker reads its NATS credentials from (never
// flags, so they stay out of process listings and records).
const (
	envNATSURL      = "NATS_URL"
	envNATSCreds    = "NATS_CREDS"
	envNATSToken    = "NATS_TOKEN"
	envNATSUser     = "NATS_USER"
	envNATSPassword = "NATS_PASSWORD"
	envNATSNKey     = "NATS_NKEY" // a file holding an NKey seed
	envNATSCA       = "NATS_CA"
	envNATSCert     = "NATS_CERT"
	envNATSKey      = "NATS_KEY"
	envWorkerName   = "SAGEBENCH_WORKER_NAME"
	envJoinToken    = "SAGEBENCH_JOIN_TOKEN"
)

// natsAuthFromEnv reads the NATS credentials of the environment.
func natsAuthFromEnv() jetstream.Auth {
	return jetstream.Auth{CredsFile: os.Getenv(envNATSCreds), NKeyFile: os.Getenv(envNATSNKey), Token: os.Getenv(envNATSToken),
		User: os.Getenv(envNATSUser), Password: os.Getenv(envNATSPassword),
		CAFile: os.Getenv(envNATSCA), CertFile: os.Getenv(envNATSCert), KeyFile: os.Getenv(envNATSKey)}
}

// joinToken is the token of --join-token-file, else of the environment
// ("" when neither).
func joinToken(file string) (string, error) {
	if file != "" {
		tok, err := jetstream.ReadJoinToken(file)
		if err != nil {
			return "", usageErrorf("--join-token-file: %v", err)
		}
		return tok, nil
	}
	tok := os.Getenv(envJoinToken)
	if tok != "" {
		if err := jetstream.CheckJoinToken(tok); err != nil {
			return "", usageErrorf("%s: %v", envJoinToken, err)
		}
	}
	return tok, nil
}

// workerOptions are worker's flags.
type workerOptions struct {
	natsURL   string
	credsFile string
	run       string
	graph     string
	name      string
	target    string
	keyEnv    string
	once      bool
	clean     bool
	insecure  bool
	tokenFile string
	drain     time.Duration
	progress  time.Duration
}

func newWorkerCmd() *cobra.Command {
	var o workerOptions
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Join distributed runs over NATS JetStream and serve their dataflow stages",
		Long: `worker connects to a NATS server with JetStream, joins the run a coordinator
(sagebench run --nodes N) announces, and serves that run's stages with the
operators it has registered: noop always, and the Q1 operators (embed,
retrieve, generate) when --target names an OpenAI-compatible endpoint. With
--target it also sends the load shards of runs whose load is spread over
the workers (Q3, Q4, Q6 with --nodes N): each shard at its intended times
against the start instant the coordinator publishes, the records back to
the coordinator. A
coordinator of another sagebench version, or a graph needing operators the
worker lacks, refuses it at join with both sides named.

Credentials come from --nats-creds (a .creds file) or the environment
(NATS_CREDS, NATS_NKEY, NATS_TOKEN, NATS_USER/NATS_PASSWORD; TLS: NATS_CA,
NATS_CERT/NATS_KEY), never from other flags, and are never recorded; a server
without credentials is refused unless --nats-insecure. A load worker needs the
run's join token (--join-token-file, or SAGEBENCH_JOIN_TOKEN): the run's
records are sealed with a key derived from it. Health and progress go to stderr. SIGINT/SIGTERM stops
pulling, lets in-flight records finish (up to --drain) and exits 0.
--clean deletes streams left behind by crashed runs and exits. See
docs/distributed.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWorker(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.natsURL, "nats-url", "", "NATS server URL, e.g. nats://127.0.0.1:4222 (default $NATS_URL)")
	f.StringVar(&o.credsFile, "nats-creds", "", "NATS .creds file (default $NATS_CREDS)")
	f.StringVar(&o.run, "run", "", "run ID to join, leaving when it ends; \"next\": the next run that starts, then leave (default: whichever coordinator answers, run after run)")
	f.StringVar(&o.graph, "graph", "", "graph name this worker expects; a run of another graph refuses it")
	f.StringVar(&o.name, "name", "", "worker name shown to the coordinator (default $SAGEBENCH_WORKER_NAME or host:pid)")
	f.StringVar(&o.target, "target", "", "OpenAI-compatible base URL for the Q1 operators (embed, retrieve, generate)")
	f.StringVar(&o.keyEnv, "target-api-key-env", "", "name of the environment variable holding the target's API key")
	f.BoolVar(&o.once, "once", false, "leave after one run instead of waiting for the next")
	f.BoolVar(&o.insecure, "nats-insecure", false, "allow a NATS server without credentials (anyone on it could read and publish into the run)")
	f.StringVar(&o.tokenFile, "join-token-file", "", "file (mode 600) holding the run's join token, as printed by sagebench run (default $SAGEBENCH_JOIN_TOKEN); a load worker needs it")
	f.BoolVar(&o.clean, "clean", false, "delete streams of crashed runs on the server and exit")
	f.DurationVar(&o.drain, "drain", 30*time.Second, "how long in-flight records may take to finish after SIGTERM")
	f.DurationVar(&o.progress, "progress", 10*time.Second, "interval of progress lines on stderr (0: none)")
	return cmd
}

// connConfig maps the flags and environment onto the connection config.
func (o workerOptions) connConfig(name string) (jetstream.ConnConfig, error) {
	c := jetstream.ConnConfig{URL: o.natsURL, Name: "sagebench worker " + name}
	if c.URL == "" {
		c.URL = os.Getenv(envNATSURL)
	}
	if c.URL == "" {
		return c, usageErrorf("--nats-url: required (or set %s), e.g. --nats-url nats://127.0.0.1:4222", envNATSURL)
	}
	if err := jetstream.CheckURL(c.URL); err != nil {
		return c, usageErrorf("--nats-url %v", err)
	}
	c.Auth = natsAuthFromEnv()
	if o.credsFile != "" {
		c.Auth.CredsFile = o.credsFile
	}
	if c.Auth.CredsFile != "" {
		if _, err := os.Stat(c.Auth.CredsFile); err != nil {
			return c, usageErrorf("--nats-creds %s: %v", c.Auth.CredsFile, err)
		}
	}
	if err := jetstream.CheckAuth(c.URL, c.Auth, o.insecure); err != nil {
		return c, usageErrorf("%v", err)
	}
	return c, nil
}

// workerVersion is the version string workers and coordinators compare at
// join: the module version and VCS revision of this binary.
func workerVersion() string {
	v, commit := record.BuildVersion()
	return v + "+" + commit
}

// loadService is the worker's side of the load fleet: with --target it
// sends the load shards of runs that need them (internal/fleet); nil
// without.
func (o workerOptions) loadService(logf func(string, ...any)) jetstream.Service {
	if o.target == "" {
		return nil
	}
	open := func(ctx context.Context, s fleet.ClientSettings) (*target.Target, error) {
		return target.Open(ctx, s.Apply(target.Config{URL: o.target, APIKeyEnv: o.keyEnv}), target.Options{})
	}
	return fleet.NodeConfig{Target: open, Logf: logf}.Service()
}

// workerRegistry builds the operators a worker serves.
func workerRegistry(o workerOptions) (*dataflow.Registry, error) {
	reg := dataflow.NewRegistry()
	if err := reg.RegisterFunc("noop", func(_ context.Context, in dataflow.Record, emit func(dataflow.Record) error) error {
		return emit(in)
	}); err != nil {
		return nil, err
	}
	if o.target == "" {
		return reg, nil
	}
	c, err := openai.NewClient(openai.Config{BaseURL: o.target, APIKeyEnv: o.keyEnv})
	if err != nil {
		return nil, usageErrorf("--target: %v", err)
	}
	if err := rag.Register(reg, c, rag.Defaults{}); err != nil {
		return nil, err
	}
	return reg, nil
}

func runWorker(ctx context.Context, o workerOptions, stdout, stderr io.Writer) error {
	addSecretEnv(ctx, o.keyEnv, envNATSToken, envNATSPassword, envJoinToken)
	name := o.name
	if name == "" {
		name = os.Getenv(envWorkerName)
	}
	conn, err := o.connConfig(name)
	if err != nil {
		return err
	}
	if o.clean {
		return cleanStreams(ctx, conn, stdout)
	}
	token, err := joinToken(o.tokenFile)
	if err != nil {
		return err
	}
	reg, err := workerRegistry(o)
	if err != nil {
		return err
	}
	shape.DefaultSynth() // the prompt text (and the tokenizer under it) is built before joining, not by a shard's first request
	var mu sync.Mutex
	returned := false // connection callbacks may fire after runWorker returns
	defer func() { mu.Lock(); returned = true; mu.Unlock() }()
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !returned {
			fmt.Fprintf(stderr, "sagebench worker: "+format+"\n", args...)
		}
	}
	conn.Logf = logf // disconnections and reconnections
	run, once := o.run, o.once
	if run == "next" { // discover the next run, serve it, leave
		run, once = "", true
	}
	w, err := jetstream.NewWorker(jetstream.WorkerConfig{
		Conn: conn, Run: run, Graph: o.graph, Version: workerVersion(), Registry: reg,
		Name: name, Once: once, DrainTimeout: o.drain, Logf: logf, Service: o.loadService(logf), JoinToken: token,
	})
	if err != nil {
		return err
	}
	defer w.Close()
	logf("connected to %s (operators: %s)", jetstream.Redact(conn.URL), strings.Join(reg.Names(), ", "))
	stop := reportProgress(w, o.progress, logf)
	defer stop()
	if err := w.Serve(ctx); err != nil {
		var refused *jetstream.RefusedError
		if errors.As(err, &refused) {
			return fmt.Errorf("worker %s: %w", jetstream.Redact(conn.URL), err)
		}
		return err
	}
	return nil
}

// reportProgress logs the served-record count every interval while it
// changes; the returned function stops it.
func reportProgress(w *jetstream.Worker, every time.Duration, logf func(string, ...any)) func() {
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		last := int64(0)
		for {
			select {
			case <-t.C:
				if n := w.Processed(); n != last {
					logf("served %d records (+%d)", n, n-last)
					last = n
				}
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}

// cleanStreams deletes the streams of crashed runs and lists them.
func cleanStreams(ctx context.Context, conn jetstream.ConnConfig, stdout io.Writer) error {
	nc, err := jetstream.Connect(conn)
	if err != nil {
		return err
	}
	defer nc.Close()
	cleaned, err := jetstream.CleanStale(ctx, nc)
	if err != nil {
		return fmt.Errorf("cleaning streams at %s: %w", jetstream.Redact(conn.URL), err)
	}
	for _, s := range cleaned {
		fmt.Fprintf(stdout, "deleted stream %s\n", s)
	}
	fmt.Fprintf(stdout, "%d stale stream(s) deleted at %s\n", len(cleaned), jetstream.Redact(conn.URL))
	return nil
}
