package ray_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/ray"
	"github.com/sagebench/sagebench/internal/ray/raytest"
)

// cluster is the real Ray cluster of this test binary: started by the
// first test that needs it (or RAY_ADDRESS), stopped by TestMain.
var cluster raytest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.Stop()
	os.Exit(code)
}

// contractTarget is one Jobs API the contract suite runs against: its
// URL and token (both secured).
type contractTarget struct {
	name string
	url  func(t *testing.T) (string, string)
}

// contractTargets are the fake and the real cluster: the same tests on
// both, so the fake cannot drift from Ray. The real one is skipped when
// ray is not installed (failed with SAGEBENCH_REQUIRE_RAY) and under -short.
func contractTargets() []contractTarget {
	return []contractTarget{
		{"fake", func(t *testing.T) (string, string) {
			f := raytest.New(t)
			f.Exec, f.SetupDelay, f.Token = raytest.ShellExec(t), 300*time.Millisecond, "fake-token-0123456789"
			return f.URL, f.Token
		}},
		{"ray", func(t *testing.T) (string, string) {
			if testing.Short() {
				t.Skip("-short: no real Ray cluster")
			}
			c := cluster.Get(t)
			return c.URL, c.Token
		}},
	}
}

// TestContract runs each contract test against each target.
func TestContract(t *testing.T) {
	tests := []struct {
		name string
		fn   func(t *testing.T, c *ray.Client, url string)
	}{
		{"version", contractVersion},
		{"token auth: 401 without, 403 wrong, x-ray-authorization alone", contractAuth},
		{"unknown submit key answers 400", contractUnknownKey},
		{"missing package: PENDING then FAILED RUNTIME_ENV_SETUP_FAILURE", contractMissingPackage},
		{"log: long line whole, partial last line, stream = GET /logs", contractLog},
		{"duplicate submission_id attaches", contractDuplicate},
		{"stop is asynchronous and ends STOPPED", contractStop},
	}
	for _, tg := range contractTargets() {
		t.Run(tg.name, func(t *testing.T) {
			url, token := tg.url(t)
			c, err := ray.NewClient(ray.Config{Address: url, Token: token})
			if err != nil {
				t.Fatal(err)
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) { tt.fn(t, c, url) })
			}
		})
	}
}

func contractCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func uniqueID(t *testing.T) string {
	return strings.NewReplacer("/", "-", " ", "_", ":", "").Replace(t.Name()) + "-" + time.Now().UTC().Format("150405.000000")
}

func contractVersion(t *testing.T, c *ray.Client, _ string) {
	v, err := c.Version(contractCtx(t))
	if err != nil || v.RayVersion == "" || v.API == "" {
		t.Fatalf("Version = %+v, %v", v, err)
	}
}

func contractUnknownKey(t *testing.T, c *ray.Client, url string) {
	body := `{"entrypoint": "echo hi", "submission_id": "` + ray.SubmissionID(uniqueID(t)) + `", "entrypoint_gpus_typo": 1}`
	req, _ := http.NewRequest(http.MethodPost, url+"/api/jobs/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(ray.HeaderAuth, c.AuthHeader().Get(ray.HeaderAuth))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("submit with an unknown key: status %d, want 400", resp.StatusCode)
	}
}

func contractAuth(t *testing.T, c *ray.Client, url string) {
	token := strings.TrimPrefix(c.AuthHeader().Get(ray.HeaderAuth), "Bearer ")
	for _, tt := range []struct {
		name   string
		cfg    ray.Config
		status int
	}{
		{"no token", ray.Config{}, http.StatusUnauthorized},
		{"wrong token", ray.Config{Token: "wrong-token"}, http.StatusForbidden},
		{"x-ray-authorization alone", ray.Config{Token: token, AuthHeader: ray.HeaderAuthProxy}, 0},
	} {
		tt.cfg.Address = url
		cc, err := ray.NewClient(tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cc.Version(contractCtx(t))
		if (tt.status == 0) != (err == nil) || (tt.status != 0 && !ray.IsStatus(err, tt.status)) {
			t.Errorf("%s: %v, want status %d", tt.name, err, tt.status)
		}
	}
}

func contractMissingPackage(t *testing.T, c *ray.Client, _ string) {
	ctx := contractCtx(t)
	spec := ray.JobSpec{Entrypoint: "python3 -c 'print(1)'", SubmissionID: ray.SubmissionID(uniqueID(t)),
		RuntimeEnv: map[string]any{"working_dir": "gcs://_ray_pkg_0000000000000000000000000000000000000000.zip"}}
	id, _, err := c.Submit(ctx, spec)
	if err != nil {
		t.Fatalf("submit of a missing package: %v; Ray accepts it and fails the job later", err)
	}
	if j, err := c.Job(ctx, id); err != nil || j.Status != ray.StatusPending {
		t.Fatalf("right after submit: %+v, %v; want PENDING (runtime env being set up)", j, err)
	}
	j, err := c.Await(ctx, id, ray.AwaitOptions{})
	if err != nil || j.Status != ray.StatusFailed || j.ErrorType != "RUNTIME_ENV_SETUP_FAILURE" {
		t.Fatalf("Await = %+v, %v; want FAILED, RUNTIME_ENV_SETUP_FAILURE", j, err)
	}
}

// longLine is over the 1 MiB a websocket message was once capped at.
const longLine = 3 << 19

func contractLog(t *testing.T, c *ray.Client, _ string) {
	ctx := contractCtx(t)
	script := "import sys\nprint('before', flush=True)\nsys.stdout.write('L' * " + itoa(longLine) + " + '\\n')\n" +
		"for i in range(25):\n    print('line', i)\nsys.stdout.write('partial-without-newline')\n"
	pkg, err := ray.NewPackage(map[string][]byte{"log.py": []byte(script)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Upload(ctx, pkg); err != nil {
		t.Fatal(err)
	}
	spec := ray.JobSpec{Entrypoint: "python3 log.py", SubmissionID: ray.SubmissionID(uniqueID(t)),
		RuntimeEnv: map[string]any{"working_dir": pkg.URI}}
	id, _, err := c.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	j, err := c.Await(ctx, id, ray.AwaitOptions{Logs: &logs})
	if err != nil || j.Status != ray.StatusSucceeded {
		t.Fatalf("Await = %+v, %v\n%.2000s", j, err, logs.String())
	}
	whole, err := c.Logs(ctx, id)
	if err != nil || whole != logs.String() {
		t.Fatalf("the streamed log (%d bytes) differs from GET /logs (%d bytes, %v)", logs.Len(), len(whole), err)
	}
	if !strings.Contains(logs.String(), "\n"+strings.Repeat("L", longLine)+"\n") || !strings.Contains(logs.String(), "line 24\n") ||
		!strings.HasSuffix(strings.TrimRight(logs.String(), "\n"), "partial-without-newline") {
		t.Fatalf("the log lost the long line, a line or its partial end (%d bytes)", logs.Len())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func contractDuplicate(t *testing.T, c *ray.Client, _ string) {
	ctx := contractCtx(t)
	runID := uniqueID(t)
	spec := ray.JobSpec{Entrypoint: "python3 -c 'print(2)'", SubmissionID: ray.SubmissionID(runID),
		Metadata: map[string]string{ray.MetaRunID: runID}}
	if _, attached, err := c.Submit(ctx, spec); err != nil || attached {
		t.Fatalf("first Submit: attached %v, %v", attached, err)
	}
	if _, attached, err := c.Submit(ctx, spec); err != nil || !attached {
		t.Fatalf("second Submit of the same id: attached %v, %v; want an attach through the 500", attached, err)
	}
	other := spec
	other.Metadata = map[string]string{ray.MetaRunID: "another-run"}
	if _, _, err := c.Submit(ctx, other); err == nil {
		t.Fatal("the same submission_id for another run: want ErrForeignJob")
	}
	if j, err := c.Await(ctx, ray.SubmissionID(runID), ray.AwaitOptions{}); err != nil || j.Status != ray.StatusSucceeded {
		t.Fatalf("Await = %+v, %v", j, err)
	}
}

func contractStop(t *testing.T, c *ray.Client, _ string) {
	ctx := contractCtx(t)
	spec := ray.JobSpec{Entrypoint: "python3 -c 'import time; print(\"up\", flush=True); time.sleep(600)'",
		SubmissionID: ray.SubmissionID(uniqueID(t))}
	id, _, err := c.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	for j, _ := c.Job(ctx, id); j.Status != ray.StatusRunning; j, _ = c.Job(ctx, id) {
		if ctx.Err() != nil || ray.Terminal(j.Status) {
			t.Fatalf("job never ran: %+v", j)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if stopped, err := c.Stop(ctx, id); err != nil || !stopped {
		t.Fatalf("Stop = %v, %v", stopped, err)
	}
	j, err := c.Await(ctx, id, ray.AwaitOptions{})
	if err != nil || j.Status != ray.StatusStopped {
		t.Fatalf("Await after stop = %+v, %v; want STOPPED", j, err)
	}
}
