//go:build raycluster

package ray_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/ray"
)

// clusterClient is a client for the real cluster at $RAY_ADDRESS (token
// from $RAY_AUTH_TOKEN). Run: RAY_ADDRESS=http://<head>:8265 go test
// -run Ray -tags raycluster ./...
func clusterClient(t *testing.T) *ray.Client {
	t.Helper()
	addr := os.Getenv("RAY_ADDRESS")
	if addr == "" {
		t.Fatal("RAY_ADDRESS is not set: the raycluster tests need a real cluster's dashboard URL")
	}
	c, err := ray.NewClient(ray.Config{Address: addr, Token: os.Getenv("RAY_AUTH_TOKEN")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRayClusterJobsAPI checks the client against a real cluster: the
// version, a working_dir upload, submit, the duplicate-id 500 the client
// attaches through, the log streamed over the websocket (the same text as
// GET /logs), a SUCCEEDED job, and a stop.
func TestRayClusterJobsAPI(t *testing.T) {
	c := clusterClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	v, err := c.Version(ctx)
	if err != nil || v.RayVersion == "" {
		t.Fatalf("Version = %+v, %v", v, err)
	}
	t.Logf("cluster runs Ray %s (Jobs API %s)", v.RayVersion, v.API)
	pkg, err := ray.NewPackage(map[string][]byte{"hello.py": []byte("import ray\nray.init()\nprint('SAGEBENCH_META', ray.__version__)\nprint('hello from', ray.cluster_resources())\n")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Upload(ctx, pkg); err != nil {
		t.Fatal(err)
	}
	runID := "raycluster-" + time.Now().UTC().Format("20060102T150405")
	spec := ray.JobSpec{Entrypoint: "python3 hello.py", SubmissionID: ray.SubmissionID(runID),
		RuntimeEnv: map[string]any{"working_dir": pkg.URI}, Metadata: map[string]string{ray.MetaRunID: runID}}
	id, attached, err := c.Submit(ctx, spec)
	if err != nil || attached {
		t.Fatalf("Submit = %q, %v, %v", id, attached, err)
	}
	if _, attached, err := c.Submit(ctx, spec); err != nil || !attached {
		t.Fatalf("second Submit of the same id: attached %v, %v; want an attach through the 500", attached, err)
	}
	var logs strings.Builder // streamed over the websocket /logs/tail
	job, err := c.Await(ctx, id, ray.AwaitOptions{Logs: &logs})
	if err != nil || job.Status != ray.StatusSucceeded || !strings.Contains(logs.String(), "hello from") {
		t.Fatalf("Await = %+v, %v\n%s", job, err, logs.String())
	}
	whole, err := c.Logs(ctx, id)
	if err != nil || whole != logs.String() {
		t.Fatalf("the streamed log differs from GET /logs (%v):\nstreamed %q\nGET %q", err, logs.String(), whole)
	}

	spec.Entrypoint, spec.SubmissionID = "python3 -c 'import time; time.sleep(600)'", ray.SubmissionID(runID+"-stop")
	spec.RuntimeEnv = nil
	id, _, err = c.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	job, err = c.Await(sctx, id, ray.AwaitOptions{})
	if err == nil || job.Status != ray.StatusStopped {
		t.Fatalf("Await of a cancelled run = %+v, %v; want STOPPED", job, err)
	}
}
