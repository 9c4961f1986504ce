// Package raytest is an in-process fake of a Ray cluster's Jobs REST API
// for tests, following the documented contract: POST /api/jobs/ (with the
// trailing slash; without it 404), GET /api/jobs/{id}, GET
// /api/jobs/{id}/logs (the whole log, cut to its last LogCap bytes
// behind a "[LOG TRUNCATED" line as recent Ray versions do), the websocket GET
// /api/jobs/{id}/logs/tail (the log from its start in chunks of up to 10
// lines or 20,000 bytes, closed normally once the job ended and the log
// was sent), POST /api/jobs/{id}/stop, GET/PUT /api/packages/gcs/{name},
// GET /api/version; statuses PENDING → RUNNING → SUCCEEDED | FAILED |
// STOPPED; a duplicate submission_id answers 500. It behaves as Ray 2.60
// does where that is less friendly than a documentation reading: a submit
// body with a key JobSubmitRequest lacks answers 400; a job stays PENDING
// while its runtime env is set up, and one whose working_dir package is
// missing goes from PENDING to FAILED (error_type
// RUNTIME_ENV_SETUP_FAILURE) rather than being refused at submit; job_id
// is the driver's (null until it runs), not the submission id; a stop
// answers at once and the job ends later; the log stream never splits a
// line and sends a partial last line as it is; with Token set, Ray's
// token auth: Authorization, or x-ray-authorization only when
// Authorization is absent (none: 401, a wrong one: 403); a package PUT
// over ray.MaxPackageBytes answers 413. The contract suite in
// internal/ray runs the same tests against this fake and a real cluster.
//
// It also holds sagebench's driver to its contract (docs/ray.md): a job
// that logs a record (SAGEBENCH_RECORD) before a SAGEBENCH_META line
// declaring its stages ready before its schedule's zero is failed.
package raytest

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/ray"
)

// Exec runs a submitted job: spec, the files of its working_dir, and the
// job's log. Its error fails the job; ctx is cancelled by a stop.
type Exec func(ctx context.Context, spec ray.JobSpec, files map[string][]byte, log io.Writer) error

// Fake is the fake cluster. Set its fields before the first request.
type Fake struct {
	URL     string
	Token   string
	Exec    Exec
	Version ray.Version
	// LogCap, when > 0, is what GET /logs answers at most, as Ray's
	// RAY_JOB_LOG_MAX_READ_BYTES: a longer log comes as its last LogCap
	// bytes behind a "[LOG TRUNCATED …]" line.
	LogCap int
	// NoTail answers the websocket /logs/tail with 404 (a dashboard or
	// proxy that does not serve it).
	NoTail bool
	// BreakTailAt, when > 0, breaks the first websocket stream (no close
	// frame) once it has sent that many bytes.
	BreakTailAt int
	// FailStop answers POST /stop with 500 and leaves the job running.
	FailStop bool
	// NoAgent answers that many submissions first with Ray's 500 "No
	// available agent to submit job" (a cluster just started).
	NoAgent int
	// SetupDelay is how long a job stays PENDING (its runtime env being
	// set up) before it runs or fails (default 20ms).
	SetupDelay time.Duration

	mu       sync.Mutex
	jobs     map[string]*job
	packages map[string][]byte
	calls    []string
	served   map[string]int64 // log bytes sent, by "logs" and "tail"
	broken   bool
	wg       sync.WaitGroup
}

type job struct {
	spec     ray.JobSpec
	status   string
	msg      string
	errType  string
	jobID    string // the driver's, once it runs
	logs     bytes.Buffer
	contract contract
	cancel   context.CancelFunc
	wake     chan struct{} // closed when the log or the status changes
}

// changed wakes the job's log streams; f.mu is held.
func (j *job) changed() {
	close(j.wake)
	j.wake = make(chan struct{})
}

// New starts a fake on 127.0.0.1, closed with the test.
func New(t testing.TB) *Fake {
	f := &Fake{jobs: map[string]*job{}, packages: map[string][]byte{}, served: map[string]int64{},
		Version: ray.Version{API: "0.1", RayVersion: "2.52.0-fake", RayCommit: "fake"}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	f.URL = srv.URL
	t.Cleanup(func() {
		f.mu.Lock()
		for _, j := range f.jobs {
			if j.cancel != nil {
				j.cancel()
			}
		}
		f.mu.Unlock()
		f.wg.Wait()
		srv.Close()
	})
	return f
}

// Packages returns the working_dir packages uploaded, by name.
func (f *Fake) Packages() map[string][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string][]byte, len(f.packages))
	for k, v := range f.packages {
		out[k] = v
	}
	return out
}

// Spec returns the submitted spec of job id.
func (f *Fake) Spec(id string) (ray.JobSpec, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j := f.jobs[id]; j != nil {
		return j.spec, true
	}
	return ray.JobSpec{}, false
}

// EnvVars is the environment a job's entrypoint gets from its spec's
// runtime_env env_vars, as NAME=value.
func EnvVars(spec ray.JobSpec) []string {
	vars, _ := spec.RuntimeEnv["env_vars"].(map[string]any)
	var out []string
	for k, v := range vars {
		if s, ok := v.(string); ok {
			out = append(out, k+"="+s)
		}
	}
	return out
}

// Calls lists the requests seen, as "METHOD /path".
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// Jobs lists the submission ids of the jobs submitted.
func (f *Fake) Jobs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]string, 0, len(f.jobs))
	for id := range f.jobs {
		ids = append(ids, id)
	}
	return ids
}

// LogBytesServed is how many bytes of job logs GET /logs ("logs") and
// the websocket ("tail") have sent.
func (f *Fake) LogBytesServed(route string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.served[route]
}

// Log returns a job's log so far ("" when unknown).
func (f *Fake) Log(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j := f.jobs[id]; j != nil {
		return j.logs.String()
	}
	return ""
}

// Status returns a job's status ("" when unknown).
func (f *Fake) Status(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j := f.jobs[id]; j != nil {
		return j.status
	}
	return ""
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	if f.Token != "" && !f.authorized(w, r) {
		return
	}
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && p == "/api/version":
		writeJSON(w, f.Version)
	case r.Method == http.MethodPost && p == "/api/jobs/":
		f.submit(w, r)
	case strings.HasPrefix(p, "/api/packages/gcs/"):
		f.pkg(w, r, strings.TrimPrefix(p, "/api/packages/gcs/"))
	case strings.HasPrefix(p, "/api/jobs/") && strings.HasSuffix(p, "/logs/tail") && r.Method == http.MethodGet:
		f.tail(w, r, strings.TrimSuffix(strings.TrimPrefix(p, "/api/jobs/"), "/logs/tail"))
	case strings.HasPrefix(p, "/api/jobs/") && p != "/api/jobs/":
		f.jobCall(w, r, strings.Split(strings.TrimPrefix(p, "/api/jobs/"), "/"))
	default:
		http.NotFound(w, r)
	}
}

// authorized is Ray's token check (http_token_authentication.py):
// Authorization, else x-ray-authorization; none 401, a wrong one 403.
func (f *Fake) authorized(w http.ResponseWriter, r *http.Request) bool {
	h := r.Header.Get(ray.HeaderAuth)
	if h == "" {
		h = r.Header.Get(ray.HeaderAuthProxy)
	}
	switch h {
	case "":
		http.Error(w, "Unauthorized: Missing authentication token", http.StatusUnauthorized)
		return false
	case "Bearer " + f.Token:
		return true
	}
	http.Error(w, "Forbidden: Invalid authentication token", http.StatusForbidden)
	return false
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (f *Fake) pkg(w http.ResponseWriter, r *http.Request, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		if _, ok := f.packages[name]; !ok {
			http.NotFound(w, r)
		}
	case http.MethodPut:
		b, _ := io.ReadAll(io.LimitReader(r.Body, ray.MaxPackageBytes+1))
		if len(b) > ray.MaxPackageBytes {
			http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
			return
		}
		f.packages[name] = b
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// submitKeys are the fields of Ray's JobSubmitRequest; any other key
// answers 400, as Ray's dataclass parsing does.
var submitKeys = map[string]bool{"entrypoint": true, "submission_id": true, "job_id": true, "runtime_env": true,
	"metadata": true, "entrypoint_num_cpus": true, "entrypoint_num_gpus": true, "entrypoint_memory": true,
	"entrypoint_resources": true, "entrypoint_label_selector": true}

func (f *Fake) submit(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var keys map[string]json.RawMessage
	var spec ray.JobSpec
	if json.Unmarshal(body, &keys) != nil || json.Unmarshal(body, &spec) != nil || spec.Entrypoint == "" {
		http.Error(w, "bad request: entrypoint is required", http.StatusBadRequest)
		return
	}
	for k := range keys {
		if !submitKeys[k] {
			http.Error(w, "TypeError: JobSubmitRequest.__init__() got an unexpected keyword argument '"+k+"'", http.StatusBadRequest)
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.NoAgent > 0 {
		f.NoAgent--
		http.Error(w, "No available agent to submit job, please try again later.", http.StatusInternalServerError)
		return
	}
	if spec.SubmissionID == "" {
		spec.SubmissionID = fmt.Sprintf("raysubmit_%d", len(f.jobs)+1)
	}
	if _, dup := f.jobs[spec.SubmissionID]; dup {
		http.Error(w, "Job with submission_id "+spec.SubmissionID+" already exists. Please use a different submission_id.", http.StatusInternalServerError)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{spec: spec, status: ray.StatusPending, cancel: cancel, wake: make(chan struct{})}
	f.jobs[spec.SubmissionID] = j
	f.wg.Add(1)
	go f.run(ctx, j)
	writeJSON(w, map[string]string{"job_id": spec.SubmissionID, "submission_id": spec.SubmissionID})
}

// workingDir unzips the spec's gcs:// working_dir, which must have been uploaded.
func (f *Fake) workingDir(spec ray.JobSpec) (map[string][]byte, error) {
	uri, _ := spec.RuntimeEnv["working_dir"].(string)
	if uri == "" {
		return nil, nil
	}
	name, ok := strings.CutPrefix(uri, "gcs://")
	f.mu.Lock()
	b, have := f.packages[name]
	f.mu.Unlock()
	if !ok || !have {
		return nil, fmt.Errorf("runtime_env.working_dir %s: package not found; upload it first", uri)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("working_dir %s: %v", uri, err)
	}
	files := map[string][]byte{}
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			return nil, err
		}
		files[zf.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	return files, nil
}

type logWriter struct {
	f *Fake
	j *job
}

func (l logWriter) Write(p []byte) (int, error) {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	if msg := l.j.contract.check(p); msg != "" && l.j.contract.broken == "" {
		l.j.contract.broken = msg
		l.j.cancel()
	}
	l.j.changed()
	return l.j.logs.Write(p)
}

func (f *Fake) run(ctx context.Context, j *job) {
	defer f.wg.Done()
	delay := f.SetupDelay
	if delay <= 0 {
		delay = 20 * time.Millisecond
	}
	select { // the runtime env's setup: PENDING meanwhile
	case <-ctx.Done():
		f.set(j, ray.StatusStopped, "Job was intentionally stopped.")
		return
	case <-time.After(delay):
	}
	files, err := f.workingDir(j.spec)
	if err != nil {
		f.mu.Lock()
		j.errType = "RUNTIME_ENV_SETUP_FAILURE"
		f.mu.Unlock()
		f.set(j, ray.StatusFailed, "Job set up failed: runtime_env setup failed: "+err.Error())
		return
	}
	f.mu.Lock()
	j.jobID = fmt.Sprintf("%02x000000", len(f.jobs))
	f.mu.Unlock()
	f.set(j, ray.StatusRunning, "")
	if f.Exec != nil {
		err = f.Exec(ctx, j.spec, files, logWriter{f, j})
	}
	f.mu.Lock()
	broken := j.contract.broken
	f.mu.Unlock()
	switch {
	case broken != "":
		f.set(j, ray.StatusFailed, "sagebench's driver broke its contract: "+broken)
	case ctx.Err() != nil:
		f.set(j, ray.StatusStopped, "Job was intentionally stopped.")
	case err != nil:
		f.set(j, ray.StatusFailed, "Job entrypoint command failed: "+err.Error())
	default:
		f.set(j, ray.StatusSucceeded, "Job finished successfully.")
	}
}

func (f *Fake) set(j *job, status, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ray.Terminal(j.status) {
		return
	}
	j.status, j.msg = status, msg
	j.changed()
}

func (f *Fake) jobCall(w http.ResponseWriter, r *http.Request, parts []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.jobs[parts[0]]
	if j == nil {
		http.Error(w, "Job "+parts[0]+" does not exist", http.StatusNotFound)
		return
	}
	switch {
	case len(parts) == 1 && r.Method == http.MethodGet:
		writeJSON(w, ray.Job{SubmissionID: j.spec.SubmissionID, JobID: j.jobID, Status: j.status,
			Message: j.msg, ErrorType: j.errType, Metadata: j.spec.Metadata})
	case len(parts) == 2 && parts[1] == "logs" && r.Method == http.MethodGet:
		logs := j.logs.String()
		if f.LogCap > 0 && len(logs) > f.LogCap {
			cut := logs[len(logs)-f.LogCap:]
			if i := strings.IndexByte(cut, '\n'); i >= 0 { // Ray skips the partial first line
				cut = cut[i+1:]
			}
			logs = fmt.Sprintf("[LOG TRUNCATED — showing last %d bytes of %d total]\n%s", f.LogCap, len(logs), cut)
		}
		f.served["logs"] += int64(len(logs))
		writeJSON(w, map[string]string{"logs": logs})
	case len(parts) == 2 && parts[1] == "stop" && r.Method == http.MethodPost && f.FailStop:
		http.Error(w, "stop failed", http.StatusInternalServerError)
	case len(parts) == 2 && parts[1] == "stop" && r.Method == http.MethodPost:
		stopped := !ray.Terminal(j.status)
		j.cancel()
		writeJSON(w, map[string]bool{"stopped": stopped})
	default:
		http.NotFound(w, r)
	}
}
