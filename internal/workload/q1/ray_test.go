package q1_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/cli"
	"github.com/sagebench/sagebench/internal/ray"
	"github.com/sagebench/sagebench/internal/ray/raytest"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/target/targettest"
	"github.com/sagebench/sagebench/internal/workload/workloadtest"
)

// localDriver is a fake cluster's Exec that runs the shipped driver with
// python3 through its test seam (SAGEBENCH_RAY_RUNTIME=local: thread
// pools instead of Ray actors) in the job's unpacked working_dir.
func localDriver(t *testing.T) raytest.Exec {
	py := raytest.Python3(t)
	return func(ctx context.Context, spec ray.JobSpec, files map[string][]byte, log io.Writer) error {
		dir := t.TempDir()
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				return err
			}
		}
		args := strings.Fields(spec.Entrypoint)
		if args[0] != "python3" { // a cluster image may have no unversioned python
			t.Errorf("entrypoint %q: want python3 …", spec.Entrypoint)
		}
		cmd := exec.CommandContext(ctx, py, args[1:]...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
		cmd.Env = append(append(os.Environ(), raytest.EnvVars(spec)...), "SAGEBENCH_RAY_RUNTIME=local", "PYTHONDONTWRITEBYTECODE=1")
		return cmd.Run()
	}
}

type rayResult struct {
	code           int
	stdout, stderr string
	dirs           int    // run directories left
	dir            string // the run directory, when one
	run            record.Run
	reqs           []record.Request
}

// runQ1Ray runs `sagebench run -e Q1 --backend ray` in-process against
// the fake cluster f and the RAG target at targetURL.
func runQ1Ray(t *testing.T, f *raytest.Fake, targetURL string, args ...string) rayResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	return runQ1RayCtx(t, ctx, f.URL, targetURL, args...)
}

// runQ1RayCtx is runQ1Ray against the cluster at addr (and the
// embedded stack when targetURL is ""); cancelling ctx is Ctrl-C.
func runQ1RayCtx(t *testing.T, ctx context.Context, addr, targetURL string, args ...string) rayResult {
	t.Helper()
	return runQ1RayConfig(t, ctx, q1Tiny, addr, targetURL, args...)
}

// runQ1RayConfig is runQ1RayCtx with the config file's body.
func runQ1RayConfig(t *testing.T, ctx context.Context, body, addr, targetURL string, args ...string) rayResult {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "q1.yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	var stdout, stderr bytes.Buffer
	argv := []string{"run", "-e", "Q1", "-c", cfg, "--output-dir", out, "--backend", "ray", "--ray-address", addr}
	if targetURL != "" { // "": the embedded stack
		argv = append(argv, "--target", targetURL)
	}
	argv = append(argv, args...)
	res := rayResult{code: cli.Main(ctx, argv, &stdout, &stderr), stdout: stdout.String(), stderr: stderr.String()}
	dirs, _ := filepath.Glob(filepath.Join(out, "q1", "q1-ray-*"))
	if res.dirs = len(dirs); len(dirs) != 1 {
		return res
	}
	res.dir = dirs[0]
	b, err := os.ReadFile(filepath.Join(dirs[0], "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res.run); err != nil {
		t.Fatal(err)
	}
	res.reqs = readJSONL(t, filepath.Join(dirs[0], "requests.jsonl"))
	if res.run.Complete {
		workloadtest.CheckRecompute(t, dirs[0])
	}
	return res
}

// TestQ1OnRayThroughTheJobsAPI drives the whole --backend ray path
// without a cluster: the Jobs API is the in-process fake and the job is
// the real driver in its local runtime against a fake RAG target.
func TestQ1OnRayThroughTheJobsAPI(t *testing.T) {
	tests := []struct {
		name   string
		opts   targettest.RAGOptions
		token  string
		failed bool // some transactions fail (http_5xx at retrieve)
	}{
		{"healthy target", targettest.RAGOptions{}, "", false},
		{"secured cluster, failing retrieves", targettest.RAGOptions{FailEvery: 3}, "cluster-token", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := raytest.New(t)
			f.Exec, f.Token = localDriver(t), tc.token
			t.Setenv("RAY_AUTH_TOKEN", tc.token)
			srv, err := targettest.NewRAG(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			rec := recordTraffic(t, srv.URL)
			res := runQ1Ray(t, f, rec.URL)
			if res.code != cli.ExitOK || res.run.RunID == "" {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
			}
			checkRayRun(t, res, f, tc.failed)
			checkRayTraffic(t, f, rec)
		})
	}
}

// TestQ1OnRayEmbeddedRecallRecomputes: on the embedded stack the Ray
// driver's retrieved ids give recall@k against exact search, and the
// result — recall included — is computed again from the run directory
// (runQ1Ray checks it), pipeline.json holding a row per transaction.
func TestQ1OnRayEmbeddedRecallRecomputes(t *testing.T) {
	f := raytest.New(t)
	f.Exec = localDriver(t)
	res := runQ1Ray(t, f, "")
	if res.code != cli.ExitOK || !res.run.Complete {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if m, ok := res.run.Result.Metric("recall_at_k"); !ok || !m.Measured() || m.N != 20 || m.Value < 0.8 {
		t.Errorf("recall_at_k %+v; want measured over the 20 transactions, ≥ 0.8", m)
	}
	if rows := pipelineRows(t, res.dir); len(rows) != 20 {
		t.Errorf("pipeline.json has %d rows; want one per transaction, 20", len(rows))
	}
}

// TestQ1OnRayPromptTokensTemplated: on --backend ray, the generate stage's
// and the transaction's input_tokens are the prompt the driver sent,
// counted as on sage — in the run's tokenizer, rendered with its chat
// template — so they equal the prompt_tokens of the embedded stack, which
// renders the same template (Llama 3.1's on the fixture tokenizer).
func TestQ1OnRayPromptTokensTemplated(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "chattemplate", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	body := "tokenizer: " + filepath.Join(dir, "llama3.tokenizer.json") + "\nchat_template: " + filepath.Join(dir, "llama3.tokenizer_config.json") + "\n" + q1Tiny
	f := raytest.New(t)
	f.Exec = localDriver(t)
	t.Setenv("RAY_AUTH_TOKEN", "")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res := runQ1RayConfig(t, ctx, body, f.URL, "embedded")
	if res.code != cli.ExitOK || res.run.RunID == "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	txns, stages := byTxn(t, res.reqs)
	if len(txns) != 20 {
		t.Fatalf("%d transaction records, want 20", len(txns))
	}
	for id, tx := range txns {
		st := stages[id]
		if len(st) != 3 {
			t.Fatalf("%s: %d stage records", id, len(st))
		}
		for _, r := range []record.Request{tx, st[2]} {
			if !r.OK || r.InputTokens < 20 || r.InputTokens != r.PromptTok {
				t.Errorf("%s: ok %v, input_tokens %d, the server's templated prompt_tokens %d (%s)", r.ID, r.OK, r.InputTokens, r.PromptTok, r.Error)
			}
		}
	}
}

// traffic is a proxy in front of the RAG target that notes when each
// request arrived and how many connections the driver opened.
type traffic struct {
	URL   string
	mu    sync.Mutex
	posts []time.Time
	conns int
}

func recordTraffic(t *testing.T, target string) *traffic {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tr := &traffic{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasPrefix(r.UserAgent(), "sagebench-ray-driver/") { // not the harness's embedding probe
			tr.mu.Lock()
			tr.posts = append(tr.posts, time.Now())
			tr.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			tr.mu.Lock()
			tr.conns++
			tr.mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	tr.URL = srv.URL
	return tr
}

// checkRayTraffic: the driver declared its stages ready before its
// schedule's zero, no request of the workload reached the target before
// that, the warm-up is in the notes, and the calls went over kept-alive
// connections (at most the stages' concurrency of them, where one per
// call would be three per transaction).
func checkRayTraffic(t *testing.T, f *raytest.Fake, tr *traffic) {
	t.Helper()
	out, err := ray.ParseOutput(f.Log(f.Jobs()[0]))
	if err != nil || !out.Meta.Ready() {
		t.Fatalf("driver's META %+v, %v: want its stages ready before its zero", out.Meta, err)
	}
	ready := time.Unix(0, out.Meta.ReadyUnixNS)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, at := range tr.posts {
		if at.Before(ready) {
			t.Fatalf("a request reached the target %s before the stages were ready", ready.Sub(at))
		}
	}
	var workers, warm int
	for _, s := range out.Meta.Warmup.Stages {
		warm += s.Warmed
	}
	for _, p := range []int{2, 2, 32} { // embed, retrieve, generate at --parallelism 2 (generate width 16)
		workers += p
	}
	workers++ // the harness's own embedding probe
	if warm < 3 || tr.conns > workers || tr.conns >= len(tr.posts) {
		t.Fatalf("%d connections for %d requests (%d warmed): want the warmed, kept-alive pools (at most %d)", tr.conns, len(tr.posts), warm, workers)
	}
}

func checkRayRun(t *testing.T, res rayResult, f *raytest.Fake, failed bool) {
	t.Helper()
	if res.run.Backend != "ray" || !res.run.Complete || !strings.HasPrefix(res.run.RunID, "q1-ray-0-") {
		t.Errorf("run.json: backend %q, complete %v, id %q", res.run.Backend, res.run.Complete, res.run.RunID)
	}
	// One job, submitted once; its submission_id is sagebench-<run id>
	// (from the repetition and its start until the runner sets Env.RunID).
	if jobs := f.Jobs(); len(jobs) != 1 || !strings.HasPrefix(jobs[0], "sagebench-q1-ray-0-") || f.Status(jobs[0]) != ray.StatusSucceeded {
		t.Errorf("jobs on the cluster %v: want one sagebench-q1-ray-0-… that SUCCEEDED", jobs)
	}
	if notes := strings.Join(res.run.Notes, "\n"); !strings.Contains(notes, "Ray 2.52.0-fake") || !strings.Contains(notes, "driver runtime local") ||
		!strings.Contains(notes, "ray: warm-up before the schedule's zero: stages ready") {
		t.Errorf("notes do not name the cluster's Ray version, the driver's runtime and its warm-up:\n%s", notes)
	}
	txns, stages := byTxn(t, res.reqs)
	if len(txns) != 20 || res.run.Summary.Requests != 20 {
		t.Fatalf("%d transaction records, summary %d requests; want 20", len(txns), res.run.Summary.Requests)
	}
	var nFailed int
	for id, tx := range txns {
		st := stages[id]
		if tx.IntendedNS <= 0 || tx.SentNS < tx.IntendedNS || tx.EndNS < tx.SentNS {
			t.Errorf("%s offsets intended %d sent %d end %d", id, tx.IntendedNS, tx.SentNS, tx.EndNS)
		}
		if !tx.OK {
			nFailed++
			if len(st) != 2 || st[1].Stage != "retrieve" || tx.ErrorClass != "http_5xx" || tx.Status != 500 {
				t.Errorf("%s failed (%s %d) with stages %+v", id, tx.ErrorClass, tx.Status, st)
			}
			continue
		}
		if len(st) != 3 || tx.FirstToken <= tx.SentNS || tx.OutputTok == 0 {
			t.Errorf("%s: %d stages, first token %d, %d tokens", id, len(st), tx.FirstToken, tx.OutputTok)
		}
	}
	if (nFailed > 0) != failed || res.run.Summary.Failed != nFailed {
		t.Errorf("%d failed transactions, summary says %d; want failures %v", nFailed, res.run.Summary.Failed, failed)
	}
}

// cancelOn calls cancel once a line with mark is written through it.
type cancelOn struct {
	io.Writer
	mark   string
	cancel context.CancelFunc
}

func (c cancelOn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(c.mark)) {
		c.cancel()
	}
	return c.Writer.Write(p)
}

// TestQ1OnRayInterrupted: Ctrl-C during the job, once its driver is
// ready and sending, stops it on the cluster and the run says it is
// incomplete.
func TestQ1OnRayInterrupted(t *testing.T) {
	f := raytest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	driver := localDriver(t)
	f.Exec = func(jctx context.Context, spec ray.JobSpec, files map[string][]byte, log io.Writer) error {
		return driver(jctx, spec, files, cancelOn{log, ray.MarkMeta, cancel}) // Ctrl-C once the stages are ready
	}
	srv, err := targettest.NewRAG(targettest.RAGOptions{HangEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res := runQ1RayCtx(t, ctx, f.URL, srv.URL)
	if res.code != cli.ExitError || res.run.RunID == "" || res.run.Complete {
		t.Fatalf("exit %d, run %q complete %v: want an interrupted run\nstderr:\n%s", res.code, res.run.RunID, res.run.Complete, res.stderr)
	}
	jobs := f.Jobs()
	if len(jobs) != 1 {
		t.Fatalf("jobs %v: want one", jobs)
	}
	// The fake marks the job once its driver has exited; on a loaded
	// machine that can trail the run's own return.
	for deadline := time.Now().Add(10 * time.Second); f.Status(jobs[0]) != ray.StatusStopped && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if st := f.Status(jobs[0]); st != ray.StatusStopped {
		t.Fatalf("job %s is %s: want STOPPED", jobs[0], st)
	}
}

// TestQ1OnRayUnreachableCluster: an address nothing listens on fails the
// run at once, naming the address.
func TestQ1OnRayUnreachableCluster(t *testing.T) {
	srv, err := targettest.NewRAG(targettest.RAGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := "http://" + closedAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := runQ1RayCtx(t, ctx, addr, srv.URL)
	if res.code != cli.ExitError || !strings.Contains(res.stderr, addr) || !strings.Contains(res.stderr, "unreachable") {
		t.Fatalf("exit %d, stderr %q: want exit 1 naming %s as unreachable", res.code, res.stderr, addr)
	}
	if res.dirs != 0 {
		t.Fatalf("%d run directories: a run that never started leaves none", res.dirs)
	}
}

// TestQ1OnRayJobThatNeverStarted: a job that ends before its driver
// declared its stages ready (a runtime_env that does not build, a
// missing python3) sent nothing: exit 1 with the job's message and log
// tail, and no run directory.
func TestQ1OnRayJobThatNeverStarted(t *testing.T) {
	f := raytest.New(t)
	f.Exec = func(_ context.Context, _ ray.JobSpec, _ map[string][]byte, log io.Writer) error {
		io.WriteString(log, "ModuleNotFoundError: No module named 'ray'\n")
		return errors.New("exit status 1")
	}
	srv, err := targettest.NewRAG(targettest.RAGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res := runQ1Ray(t, f, srv.URL)
	if res.code != cli.ExitError || !strings.Contains(res.stderr, "never declared its stages ready") ||
		!strings.Contains(res.stderr, "No module named 'ray'") {
		t.Fatalf("exit %d, stderr %q: want exit 1 with the job's log", res.code, res.stderr)
	}
	if res.dirs != 0 {
		t.Fatalf("%d run directories: a run that never started leaves none", res.dirs)
	}
}

// TestQ1OnRayDryRunNeedsAnAddress: --dry-run prints the job, and without
// an address says so and exits 2, as the run does.
func TestQ1OnRayDryRunNeedsAnAddress(t *testing.T) {
	t.Setenv("RAY_ADDRESS", "")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no address", nil, cli.ExitUsage},
		{"address", []string{"--ray-address", "http://127.0.0.1:8265"}, cli.ExitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"run", "-e", "Q1", "--backend", "ray", "--quick", "--dry-run"}, tc.args...)
			code := cli.Main(context.Background(), args, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String(), "POST /api/jobs/") {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout.String(), stderr.String())
			}
			if tc.code != cli.ExitOK && !strings.Contains(stderr.String(), "--ray-address") {
				t.Fatalf("stderr %q does not say the address is missing", stderr.String())
			}
		})
	}
}

func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestQ1OnRayTargetKeyStaysOutOfThePackage: the target's API key reaches
// the target on every driver call, but is in neither the uploaded package
// (plan.json, which Ray keeps in its key-value store) nor any file of it:
// it travels in the job's runtime_env env_vars, or, with
// ray.target_key_env, not at all (the cluster's environment holds it).
func TestQ1OnRayTargetKeyStaysOutOfThePackage(t *testing.T) {
	const key = "sk-q1-ray-secret-0123456789"
	for _, tc := range []struct{ name, extra, clusterEnv string }{
		{"key in the job's env_vars", "", ""},
		{"key in the cluster's own environment", "ray:\n  target_key_env: Q1_CLUSTER_KEY\n", "Q1_CLUSTER_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("Q1_RAY_KEY", key)
			if tc.clusterEnv != "" {
				t.Setenv(tc.clusterEnv, key) // the fake cluster's driver inherits this process's environment
			}
			f := raytest.New(t)
			f.Exec = localDriver(t)
			srv, err := targettest.NewRAG(targettest.RAGOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			var mu sync.Mutex
			calls, bad := 0, 0
			up, _ := url.Parse(srv.URL)
			rp := httputil.NewSingleHostReverseProxy(up)
			gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.UserAgent(), "sagebench-ray-driver/") {
					mu.Lock()
					calls++
					if r.Header.Get("Authorization") != "Bearer "+key {
						bad++
					}
					mu.Unlock()
				}
				rp.ServeHTTP(w, r)
			}))
			defer gate.Close()
			dir := t.TempDir()
			cfg := filepath.Join(dir, "q1.yaml")
			body := q1Tiny + "target:\n  api_key_env: Q1_RAY_KEY\n" + tc.extra
			if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			code := cli.Main(ctx, []string{"run", "-e", "Q1", "-c", cfg, "--output-dir", filepath.Join(dir, "out"),
				"--backend", "ray", "--ray-address", f.URL, "--target", gate.URL}, &stdout, &stderr)
			if code != cli.ExitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
			}
			mu.Lock()
			defer mu.Unlock()
			if calls == 0 || bad != 0 {
				t.Fatalf("%d driver calls, %d without the target's key", calls, bad)
			}
			for name, zb := range f.Packages() {
				if bytes.Contains(zipText(t, zb), []byte(key)) {
					t.Fatalf("package %s holds the target's key", name)
				}
			}
			for _, id := range f.Jobs() {
				spec, _ := f.Spec(id)
				vars := strings.Join(raytest.EnvVars(spec), " ")
				if inVars := strings.Contains(vars, key); inVars != (tc.clusterEnv == "") {
					t.Fatalf("env_vars %q: key sent %v, want %v", vars, inVars, tc.clusterEnv == "")
				}
			}
		})
	}
}

// zipText is every file of a zip, concatenated uncompressed.
func zipText(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		c, _ := io.ReadAll(rc)
		rc.Close()
		out = append(out, c...)
	}
	return out
}
