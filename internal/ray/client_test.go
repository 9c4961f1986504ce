package ray_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/ray"
	"github.com/sagebench/sagebench/internal/ray/raytest"
)

func client(t *testing.T, f *raytest.Fake, token string) *ray.Client {
	t.Helper()
	c, err := ray.NewClient(ray.Config{Address: f.URL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readyMeta is the driver's line declaring its stages ready before its
// schedule's zero, which the fake requires before any record.
const readyMeta = ray.MarkMeta + `{"ready_unix_ns":10,"start_unix_ns":20,"runtime":"local"}`

func noSleep(ctx context.Context, d time.Duration) { // yields without waiting
	select {
	case <-ctx.Done():
	case <-time.After(time.Millisecond):
	}
}

func spec(t *testing.T, c *ray.Client, runID string) ray.JobSpec {
	t.Helper()
	pkg, err := ray.NewPackage(map[string][]byte{"plan.json": []byte(`{}`), "d.py": []byte("print(1)")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Upload(context.Background(), pkg); err != nil {
		t.Fatal(err)
	}
	return ray.JobSpec{Entrypoint: "python d.py", SubmissionID: ray.SubmissionID(runID),
		RuntimeEnv: map[string]any{"working_dir": pkg.URI}, Metadata: map[string]string{ray.MetaRunID: runID}}
}

func TestSubmitAwaitSucceeds(t *testing.T) {
	f := raytest.New(t)
	f.Exec = func(_ context.Context, _ ray.JobSpec, files map[string][]byte, log io.Writer) error {
		if string(files["d.py"]) != "print(1)" {
			return fmt.Errorf("working_dir files: %v", files)
		}
		fmt.Fprintln(log, "hello")
		fmt.Fprintln(log, readyMeta)
		fmt.Fprintln(log, ray.MarkRecord+`{"id":"txn-000000"}`)
		return nil
	}
	c := client(t, f, "")
	id, attached, err := c.Submit(context.Background(), spec(t, c, "q1-ray-0-aa"))
	if err != nil || attached || id != "sagebench-q1-ray-0-aa" {
		t.Fatalf("Submit = %q, %v, %v", id, attached, err)
	}
	var seen bytes.Buffer
	job, err := c.Await(context.Background(), id, ray.AwaitOptions{Logs: &seen, Sleep: noSleep})
	if err != nil || job.Status != ray.StatusSucceeded {
		t.Fatalf("Await = %+v, %v", job, err)
	}
	if !strings.HasPrefix(seen.String(), "hello\n") || !strings.HasSuffix(seen.String(), `{"id":"txn-000000"}`+"\n") {
		t.Fatalf("forwarded %q", seen.String())
	}
	if !slices.Contains(f.Calls(), "POST /api/jobs/") {
		t.Fatalf("no POST with the trailing slash in %v", f.Calls())
	}
}

func TestSubmitDuplicate(t *testing.T) {
	f := raytest.New(t)
	c := client(t, f, "")
	s := spec(t, c, "q1-ray-0-bb")
	if _, _, err := c.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		runID    string
		attached bool
		err      error
	}{
		{"same run attaches", "q1-ray-0-bb", true, nil},
		{"another run is refused", "q1-ray-0-zz", false, ray.ErrForeignJob},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s2 := s
			s2.Metadata = map[string]string{ray.MetaRunID: tt.runID}
			id, attached, err := c.Submit(context.Background(), s2)
			if !errors.Is(err, tt.err) || attached != tt.attached {
				t.Fatalf("Submit = %q, %v, %v; want attached %v, err %v", id, attached, err, tt.attached, tt.err)
			}
		})
	}
}

func TestAuthHeader(t *testing.T) {
	f := raytest.New(t)
	f.Token = "s3cret"
	tests := []struct {
		name, token string
		status      int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"wrong token", "nope", http.StatusUnauthorized},
		{"token", "s3cret", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := client(t, f, tt.token).Version(context.Background())
			switch {
			case tt.status == 0 && (err != nil || v.RayVersion == ""):
				t.Fatalf("Version = %+v, %v", v, err)
			case tt.status != 0 && !ray.IsStatus(err, tt.status):
				t.Fatalf("err = %v, want status %d", err, tt.status)
			}
		})
	}
}

// cancelledWhileRunning submits a job that logs "started" and runs until
// stopped, and returns a context cancelled once it is running.
func cancelledWhileRunning(t *testing.T, f *raytest.Fake, runID string) (*ray.Client, string, context.Context) {
	t.Helper()
	running := make(chan struct{})
	f.Exec = func(ctx context.Context, _ ray.JobSpec, _ map[string][]byte, log io.Writer) error {
		fmt.Fprintln(log, "started")
		close(running)
		<-ctx.Done()
		return ctx.Err()
	}
	c := client(t, f, "")
	id, _, err := c.Submit(context.Background(), spec(t, c, runID))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-running; cancel() }()
	return c, id, ctx
}

func TestAwaitStopsOnCancel(t *testing.T) {
	f := raytest.New(t)
	c, id, ctx := cancelledWhileRunning(t, f, "q1-ray-0-cc")
	var logs bytes.Buffer
	job, err := c.Await(ctx, id, ray.AwaitOptions{Logs: &logs, Sleep: noSleep})
	if !errors.Is(err, context.Canceled) || job.Status != ray.StatusStopped {
		t.Fatalf("Await = %+v, %v; want STOPPED and context.Canceled", job, err)
	}
	if !strings.Contains(logs.String(), "started") || !slices.Contains(f.Calls(), "POST /api/jobs/"+id+"/stop") {
		t.Fatalf("logs %q, calls %v", logs.String(), f.Calls())
	}
}

func TestAwaitFailed(t *testing.T) {
	f := raytest.New(t)
	f.Exec = func(context.Context, ray.JobSpec, map[string][]byte, io.Writer) error { return errors.New("exit 1") }
	c := client(t, f, "")
	id, _, _ := c.Submit(context.Background(), spec(t, c, "q1-ray-0-dd"))
	job, err := c.Await(context.Background(), id, ray.AwaitOptions{Sleep: noSleep})
	if err != nil || job.Status != ray.StatusFailed || !strings.Contains(job.Message, "exit 1") {
		t.Fatalf("Await = %+v, %v", job, err)
	}
}

func TestAwaitBacksOff(t *testing.T) {
	f := raytest.New(t)
	release := make(chan struct{})
	f.Exec = func(ctx context.Context, _ ray.JobSpec, _ map[string][]byte, _ io.Writer) error {
		<-release
		return nil
	}
	c := client(t, f, "")
	id, _, _ := c.Submit(context.Background(), spec(t, c, "q1-ray-0-ee"))
	var mu sync.Mutex
	var waits []time.Duration
	sleepRec := func(ctx context.Context, d time.Duration) {
		mu.Lock()
		waits = append(waits, d)
		if len(waits) == 12 {
			close(release)
		}
		mu.Unlock()
		noSleep(ctx, d)
	}
	o := ray.AwaitOptions{MinPoll: 10 * time.Millisecond, MaxPoll: 40 * time.Millisecond, Sleep: sleepRec}
	if _, err := c.Await(context.Background(), id, o); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(waits) < 12 || waits[11] != 40*time.Millisecond {
		t.Fatalf("waits %v: want growth from 10ms to the 40ms cap while nothing changes", waits)
	}
	for _, w := range waits {
		if w < 10*time.Millisecond || w > 40*time.Millisecond {
			t.Fatalf("waits %v: outside [MinPoll, MaxPoll]", waits)
		}
	}
}

func TestUploadSkipsAPackageThatExists(t *testing.T) {
	f := raytest.New(t)
	c := client(t, f, "")
	pkg, _ := ray.NewPackage(map[string][]byte{"a": []byte("x")})
	again, _ := ray.NewPackage(map[string][]byte{"a": []byte("x")})
	if pkg.URI != again.URI || !strings.HasPrefix(pkg.URI, "gcs://_ray_pkg_") {
		t.Fatalf("URIs %s, %s: want the same content-addressed gcs:// URI", pkg.URI, again.URI)
	}
	for range 2 {
		if err := c.Upload(context.Background(), pkg); err != nil {
			t.Fatal(err)
		}
	}
	puts := 0
	for _, call := range f.Calls() {
		if strings.HasPrefix(call, "PUT ") {
			puts++
		}
	}
	if puts != 1 {
		t.Fatalf("%d PUTs in %v, want 1", puts, f.Calls())
	}
}

func TestUnreachableNamesTheAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := ray.NewClient(ray.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Version(context.Background())
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("err = %v; want it to name %s as unreachable", err, addr)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name, addr string
		ok         bool
	}{
		{"http", "http://127.0.0.1:8265", true},
		{"https", "https://ray.example:443", true},
		{"empty", "", false},
		{"ray client address", "ray://head:10001", false},
		{"no scheme", "127.0.0.1:8265", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := (ray.Config{Address: tt.addr}).Validate(); (err == nil) != tt.ok {
				t.Fatalf("Validate(%q) = %v, want ok %v", tt.addr, err, tt.ok)
			}
		})
	}
}

func TestSubmissionIDIsDeterministic(t *testing.T) {
	if a, b := ray.SubmissionID("q1-ray-0-ab12"), ray.SubmissionID("q1-ray-0-ab12"); a != b || a != "sagebench-q1-ray-0-ab12" {
		t.Fatalf("%q, %q", a, b)
	}
	if got := ray.SubmissionID("a/b c"); got != "sagebench-a_b_c" {
		t.Fatalf("SubmissionID(a/b c) = %q", got)
	}
}

// TestAwaitGivesUpWhenTheStopFails: cancelled while the log is read by
// the GET /logs fallback (no websocket), with a dashboard that fails the
// stop, Await returns at once with both errors instead of waiting
// StopWait for an end no one will see.
func TestAwaitGivesUpWhenTheStopFails(t *testing.T) {
	f := raytest.New(t)
	f.NoTail, f.FailStop = true, true
	c, id, ctx := cancelledWhileRunning(t, f, "q1-ray-0-sf")
	start := time.Now()
	_, err := c.Await(ctx, id, ray.AwaitOptions{Sleep: noSleep, StopWait: 20 * time.Second})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopping job") {
		t.Fatalf("Await: %v, want context.Canceled and the failed stop", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("Await took %s: it waited for an end no one would see", took)
	}
}
