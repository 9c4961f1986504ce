package ray_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
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

// TestAuthHeader: the fake checks the token as Ray 2.60's token auth does
// (Authorization, else x-ray-authorization; none 401, wrong 403), and the
// header carrying the token is configurable, so a proxy's own credential
// can take Authorization.
func TestAuthHeader(t *testing.T) {
	f := raytest.New(t)
	f.Token = "s3cret"
	tests := []struct {
		name   string
		cfg    ray.Config
		status int
	}{
		{"no token", ray.Config{}, http.StatusUnauthorized},
		{"wrong token", ray.Config{Token: "nope"}, http.StatusForbidden},
		{"token", ray.Config{Token: "s3cret"}, 0},
		{"token in x-ray-authorization", ray.Config{Token: "s3cret", AuthHeader: "x-ray-authorization"}, 0},
		{"a proxy's Authorization reaching Ray shadows x-ray-authorization", ray.Config{Token: "s3cret",
			AuthHeader: "x-ray-authorization", ProxyAuth: "Basic cHJveHk6cHc="}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Address = f.URL
			c, err := ray.NewClient(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			v, err := c.Version(context.Background())
			switch {
			case tt.status == 0 && (err != nil || v.RayVersion == ""):
				t.Fatalf("Version = %+v, %v", v, err)
			case tt.status != 0 && !ray.IsStatus(err, tt.status):
				t.Fatalf("err = %v, want status %d", err, tt.status)
			}
		})
	}
}

// TestAuthBehindAProxy: a proxy that checks its own credential in
// Authorization and strips it before the dashboard lets the token through
// in x-ray-authorization; with the token in Authorization (the default)
// the proxy refuses.
func TestAuthBehindAProxy(t *testing.T) {
	f := raytest.New(t)
	f.Token = "s3cret"
	up, _ := url.Parse(f.URL)
	rp := httputil.NewSingleHostReverseProxy(up)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Basic cHJveHk6cHc=" {
			http.Error(w, "proxy: who are you", http.StatusProxyAuthRequired)
			return
		}
		r.Header.Del("Authorization")
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	for _, tt := range []struct {
		name   string
		cfg    ray.Config
		status int
	}{
		{"token in Authorization", ray.Config{Token: "s3cret"}, http.StatusProxyAuthRequired},
		{"token in x-ray-authorization, proxy credential in Authorization",
			ray.Config{Token: "s3cret", AuthHeader: "x-ray-authorization", ProxyAuth: "Basic cHJveHk6cHc="}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Address = proxy.URL
			c, err := ray.NewClient(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Version(context.Background())
			if (tt.status == 0) != (err == nil) || (tt.status != 0 && !ray.IsStatus(err, tt.status)) {
				t.Fatalf("err = %v, want status %d", err, tt.status)
			}
		})
	}
	if _, err := ray.NewClient(ray.Config{Address: proxy.URL, ProxyAuth: "Basic x"}); err == nil {
		t.Error("a proxy credential with the token in Authorization too: want a configuration error")
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
	for f.Status(id) != ray.StatusRunning { // past PENDING: no status change while Await polls
		time.Sleep(5 * time.Millisecond)
	}
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

// TestSubmitRetriesNoAgent: seconds after `ray start` Ray answers a
// submission with 500 "No available agent to submit job" (seen on Ray
// 2.60 here); the client retries it rather than failing the run.
func TestSubmitRetriesNoAgent(t *testing.T) {
	f := raytest.New(t)
	f.NoAgent = 2
	c := client(t, f, "")
	id, attached, err := c.Submit(context.Background(), spec(t, c, "q1-ray-0-na"))
	if err != nil || attached || id != "sagebench-q1-ray-0-na" {
		t.Fatalf("Submit = %q, %v, %v; want a retried submission", id, attached, err)
	}
}

// TestUploadLimits: a package over Ray's 100 MiB body limit is refused
// before any byte is sent; the PUT has its own timeout, not the 15 s of
// the other calls.
func TestUploadLimits(t *testing.T) {
	f := raytest.New(t)
	c := client(t, f, "")
	big := ray.Package{URI: "gcs://_ray_pkg_big.zip", Zip: make([]byte, ray.MaxPackageBytes+1)}
	if err := c.Upload(context.Background(), big); !errors.Is(err, ray.ErrPackageTooLarge) {
		t.Fatalf("Upload of %d bytes = %v, want ErrPackageTooLarge", len(big.Zip), err)
	}
	for _, call := range f.Calls() {
		if strings.HasPrefix(call, "PUT") {
			t.Fatalf("a too large package reached the cluster: %v", f.Calls())
		}
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.NotFound(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		time.Sleep(300 * time.Millisecond)
	}))
	defer slow.Close()
	uc, err := ray.NewClient(ray.Config{Address: slow.URL, UploadTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pkg := ray.Package{URI: "gcs://_ray_pkg_x.zip", Zip: []byte("zip")}
	if err := uc.Upload(context.Background(), pkg); err == nil {
		t.Fatal("a PUT slower than UploadTimeout succeeded")
	}
	uc, _ = ray.NewClient(ray.Config{Address: slow.URL, UploadTimeout: time.Minute})
	if err := uc.Upload(context.Background(), pkg); err != nil {
		t.Fatalf("a PUT within UploadTimeout: %v", err)
	}
}
