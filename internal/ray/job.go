package ray

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Job statuses of the Jobs API.
const (
	StatusPending   = "PENDING"
	StatusRunning   = "RUNNING"
	StatusStopped   = "STOPPED"
	StatusSucceeded = "SUCCEEDED"
	StatusFailed    = "FAILED"
)

// Terminal reports whether status is final.
func Terminal(status string) bool {
	return status == StatusStopped || status == StatusSucceeded || status == StatusFailed
}

// JobSpec is the body of POST /api/jobs/.
type JobSpec struct {
	Entrypoint        string            `json:"entrypoint"`
	SubmissionID      string            `json:"submission_id"`
	RuntimeEnv        map[string]any    `json:"runtime_env,omitempty"`
	Metadata          map[string]string `json:"metadata,omitempty"`
	EntrypointNumCPUs float64           `json:"entrypoint_num_cpus,omitempty"`
}

// Job is the part of GET /api/jobs/{id} sagebench reads.
type Job struct {
	SubmissionID   string            `json:"submission_id"`
	JobID          string            `json:"job_id"`
	Status         string            `json:"status"`
	Message        string            `json:"message"`
	ErrorType      string            `json:"error_type"`
	StartTime      int64             `json:"start_time"` // ms since the epoch
	EndTime        int64             `json:"end_time"`
	Metadata       map[string]string `json:"metadata"`
	DriverExitCode *int              `json:"driver_exit_code"`
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// SubmissionID is the job's id for a run: the same run id always gives
// the same submission_id, so a retried submission finds its job.
func SubmissionID(runID string) string {
	return "sagebench-" + unsafeID.ReplaceAllString(runID, "_")
}

// MetaRunID is the metadata key holding the run id of a job.
const MetaRunID = "sagebench_run_id"

// ErrForeignJob is returned by Submit when the submission_id exists but
// belongs to another run.
var ErrForeignJob = errors.New("ray: the submission_id exists and belongs to another run")

// Submit posts spec. When its submission_id already exists (the API
// answers 500) and the job carries the same run id in its metadata,
// Submit attaches to it (attached true): a retried submission never runs
// the workload twice.
func (c *Client) Submit(ctx context.Context, spec JobSpec) (id string, attached bool, err error) {
	var out struct {
		SubmissionID string `json:"submission_id"`
		JobID        string `json:"job_id"`
	}
	err = c.doJSON(ctx, http.MethodPost, "/api/jobs/", spec, &out)
	for wait := 250 * time.Millisecond; noAgent(err) && wait < NoAgentWait; wait *= 2 {
		sleep(ctx, wait) // a cluster just started: its dashboard agent is not registered yet
		err = c.doJSON(ctx, http.MethodPost, "/api/jobs/", spec, &out)
	}
	if err == nil {
		if out.SubmissionID == "" {
			out.SubmissionID = out.JobID
		}
		return out.SubmissionID, false, nil
	}
	if !IsStatus(err, http.StatusInternalServerError) {
		return "", false, err
	}
	job, gerr := c.Job(ctx, spec.SubmissionID)
	if gerr != nil {
		return "", false, err // a real 500: report the submission's error
	}
	if job.Metadata[MetaRunID] != spec.Metadata[MetaRunID] {
		return "", false, fmt.Errorf("%w: %s (run %q)", ErrForeignJob, spec.SubmissionID, job.Metadata[MetaRunID])
	}
	return spec.SubmissionID, true, nil
}

// NoAgentWait bounds the retries of a submission Ray answers with 500
// "No available agent to submit job" (a cluster whose dashboard agent has
// not registered yet, seconds after `ray start`): 250 ms doubling, about
// 30 s in all.
const NoAgentWait = 16 * time.Second

func noAgent(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusInternalServerError && strings.Contains(ae.Body, "No available agent")
}

// Job is GET /api/jobs/{id}.
func (c *Client) Job(ctx context.Context, id string) (Job, error) {
	var j Job
	err := c.doJSON(ctx, http.MethodGet, "/api/jobs/"+url.PathEscape(id), nil, &j)
	return j, err
}

// Logs is GET /api/jobs/{id}/logs: the job's whole log so far (recent
// Ray versions answer only its last RAY_JOB_LOG_MAX_READ_BYTES, after a
// "[LOG TRUNCATED" line). Await streams the log instead (see tail).
func (c *Client) Logs(ctx context.Context, id string) (string, error) {
	var out struct {
		Logs string `json:"logs"`
	}
	err := c.doJSON(ctx, http.MethodGet, "/api/jobs/"+url.PathEscape(id)+"/logs", nil, &out)
	return out.Logs, err
}

// Stop is POST /api/jobs/{id}/stop; stopped is false when the job had
// already ended.
func (c *Client) Stop(ctx context.Context, id string) (stopped bool, err error) {
	var out struct {
		Stopped bool `json:"stopped"`
	}
	err = c.doJSON(ctx, http.MethodPost, "/api/jobs/"+url.PathEscape(id)+"/stop", nil, &out)
	return out.Stopped, err
}
