package raytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Environment of the real-cluster tests. SAGEBENCH_RAY_VENV names the
// virtualenv holding ray[default] (.ci/run installs it); without it `ray`
// is looked up on PATH. SAGEBENCH_REQUIRE_RAY=1 (set by .ci/run) turns a
// missing ray into a failure instead of a skip. RAY_ADDRESS, when set,
// names a running cluster's dashboard to use instead of starting one.
const (
	EnvRayVenv    = "SAGEBENCH_RAY_VENV"
	EnvRequireRay = "SAGEBENCH_REQUIRE_RAY"
	EnvRayAddress = "RAY_ADDRESS"
)

// StartTimeout bounds `ray start --head` until the Jobs API answers:
// generous, the machine running the tests may be loaded.
const StartTimeout = 4 * time.Minute

// Cluster is a real single-machine Ray cluster a test started (or the one
// at RAY_ADDRESS): its dashboard URL and how to stop it.
type Cluster struct {
	URL     string // the dashboard, http://127.0.0.1:<port>
	GCS     string // 127.0.0.1:<port>, for `ray start --address`
	Bin     string // the venv's bin directory ("" for RAY_ADDRESS)
	TempDir string
	Started time.Duration // from `ray start` to the Jobs API answering
	// Token is the cluster's auth token: StartCluster starts it secured
	// (RAY_AUTH_MODE=token, as Ray 2.60 does by default once a token
	// exists), with a random token of its own.
	Token string

	cmd     *exec.Cmd
	workers []*exec.Cmd
	env     []string
	once    sync.Once
}

// rayBin returns the directory holding the `ray` executable, or "" and
// why not.
func rayBin() (string, string) {
	if v := os.Getenv(EnvRayVenv); v != "" {
		bin := filepath.Join(v, "bin")
		if _, err := os.Stat(filepath.Join(bin, "ray")); err != nil {
			return "", fmt.Sprintf("%s=%s has no bin/ray", EnvRayVenv, v)
		}
		return bin, ""
	}
	p, err := exec.LookPath("ray")
	if err != nil {
		return "", "ray is not installed (no " + EnvRayVenv + ", no ray on PATH; .ci/run installs ray[default] into a virtualenv)"
	}
	return filepath.Dir(p), ""
}

// NeedRay returns the directory of the `ray` executable; it skips the test
// when there is none, or fails it when SAGEBENCH_REQUIRE_RAY is set.
func NeedRay(t testing.TB) string {
	t.Helper()
	bin, why := rayBin()
	if bin == "" {
		if os.Getenv(EnvRequireRay) != "" {
			t.Fatalf("%s, and %s is set: the real-Ray tests must run", why, EnvRequireRay)
		}
		t.Skip(why)
	}
	return bin
}

// freePorts returns n distinct free loopback TCP ports.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// StartCluster starts `ray start --head --block` with 2 CPUs on free
// loopback ports and a temporary directory of its own, waits up to
// StartTimeout for its Jobs API, and returns it; the caller stops it with
// Stop. The job drivers' `python3` is the venv's (its bin leads PATH).
func StartCluster(ctx context.Context, bin string, logs *os.File) (*Cluster, error) {
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	// A short directory: Ray's unix socket paths live under it (≤ 107 bytes).
	tmp, err := os.MkdirTemp("", "sbray")
	if err != nil {
		return nil, err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	c := &Cluster{URL: fmt.Sprintf("http://127.0.0.1:%d", ports[1]), GCS: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		Bin: bin, TempDir: tmp, Token: hex.EncodeToString(tok)}
	c.env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"RAY_USAGE_STATS_ENABLED=0", "VIRTUAL_ENV="+filepath.Dir(bin), "RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN="+c.Token,
		// A loaded machine (load 30 on 2 cores here) can stall the raylet past
		// the GCS's default health check (a few seconds), which then declares
		// the node dead and the whole cluster goes down mid-test: tolerate
		// minutes instead.
		"RAY_health_check_period_ms=10000", "RAY_health_check_failure_threshold=30")
	wp := 20000 + ports[4]%40000 // a worker port range; Ray picks free ones inside it
	args := []string{"start", "--head", "--block", "--disable-usage-stats", "--include-dashboard", "true",
		"--node-ip-address", "127.0.0.1", "--port", strconv.Itoa(ports[0]),
		"--dashboard-host", "127.0.0.1", "--dashboard-port", strconv.Itoa(ports[1]),
		"--ray-client-server-port", strconv.Itoa(ports[2]), "--dashboard-agent-listen-port", strconv.Itoa(ports[3]),
		"--min-worker-port", strconv.Itoa(wp), "--max-worker-port", strconv.Itoa(wp + 400),
		"--num-cpus", "2", "--temp-dir", tmp}
	c.cmd = c.command(ctx, args, logs)
	start := time.Now()
	if err := c.cmd.Start(); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("ray start --head: %w", err)
	}
	if err := c.waitReady(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	c.Started = time.Since(start)
	return c, nil
}

func (c *Cluster) command(ctx context.Context, args []string, logs *os.File) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.Bin, "ray"), args...)
	cmd.Env = c.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if logs != nil {
		cmd.Stdout, cmd.Stderr = logs, logs
	}
	return cmd
}

// waitReady polls GET /api/version until it answers 200.
func (c *Cluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/api/version", nil)
		req.Header.Set("Authorization", "Bearer "+c.Token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				go func() { <-exited }()
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("ray start --head exited before its Jobs API answered: %v", err)
		case <-ctx.Done():
			go func() { <-exited }()
			return fmt.Errorf("ray start --head: the Jobs API at %s did not answer within %s", c.URL, StartTimeout)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// AddWorker starts a worker node (`ray start --address`) with cpus CPUs
// on this machine, joined to the head, stopped with the cluster.
func (c *Cluster) AddWorker(ctx context.Context, cpus int, logs *os.File) error {
	if c.cmd == nil {
		return errors.New("raytest: AddWorker needs a cluster this process started")
	}
	cmd := c.command(ctx, []string{"start", "--block", "--disable-usage-stats", "--address", c.GCS,
		"--node-ip-address", "127.0.0.1", "--num-cpus", strconv.Itoa(cpus)}, logs)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("ray start --address: %w", err)
	}
	c.workers = append(c.workers, cmd)
	return nil
}

// Stop ends the cluster's processes: SIGTERM to each `ray start --block`
// process group (which stops what it started), SIGKILL to what remains
// after 20 s; then it removes the temporary directory. Idempotent.
func (c *Cluster) Stop() {
	if c == nil || c.cmd == nil {
		return
	}
	c.once.Do(func() {
		cmds := append([]*exec.Cmd{}, c.workers...)
		for _, cmd := range append(cmds, c.cmd) {
			stopGroup(cmd)
		}
		os.RemoveAll(c.TempDir)
	})
}

func stopGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	pg := cmd.Process.Pid
	_ = syscall.Kill(-pg, syscall.SIGTERM)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && syscall.Kill(-pg, 0) == nil {
		time.Sleep(200 * time.Millisecond)
	}
	_ = syscall.Kill(-pg, syscall.SIGKILL)
}

// Shared is one cluster for a test binary: the first caller starts it (or
// uses RAY_ADDRESS), later callers get the same one; TestMain calls Stop.
type Shared struct {
	once sync.Once
	c    *Cluster
	err  error
	skip string
	logs string // ray start's output, removed by Stop
}

// Get returns the shared cluster, skipping or failing t as NeedRay does.
func (s *Shared) Get(t testing.TB) *Cluster {
	t.Helper()
	s.once.Do(func() { s.c, s.skip, s.err = s.start() })
	if s.skip != "" {
		if os.Getenv(EnvRequireRay) != "" {
			t.Fatalf("%s, and %s is set: the real-Ray tests must run", s.skip, EnvRequireRay)
		}
		t.Skip(s.skip)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.c
}

func (s *Shared) start() (*Cluster, string, error) {
	if addr := os.Getenv(EnvRayAddress); addr != "" {
		return &Cluster{URL: strings.TrimRight(addr, "/"), Token: os.Getenv("RAY_AUTH_TOKEN")}, "", nil
	}
	bin, why := rayBin()
	if bin == "" {
		return nil, why, nil
	}
	logs, err := os.CreateTemp("", "sbray-start-*.log")
	if err != nil {
		return nil, "", err
	}
	defer logs.Close()
	s.logs = logs.Name()
	c, err := StartCluster(context.Background(), bin, logs)
	if err != nil {
		b, _ := os.ReadFile(logs.Name())
		err = fmt.Errorf("%w\n%s", err, tail(string(b), 4000))
	}
	return c, "", err
}

// Stop stops the shared cluster if one was started.
func (s *Shared) Stop() {
	s.c.Stop()
	if s.logs != "" {
		os.Remove(s.logs)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
