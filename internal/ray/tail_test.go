package ray_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/ray"
	"github.com/sagebench/sagebench/internal/ray/raytest"
)

// recordsJob is a job that logs n records in several writes, as the
// driver does, after its ready line; want is the whole log.
func recordsJob(n int) (raytest.Exec, string) {
	var b strings.Builder
	b.WriteString("Connecting to existing Ray cluster\n" + readyMeta + "\n")
	for i := range n {
		fmt.Fprintf(&b, "%s{\"id\":\"txn-%06d\",\"pad\":%q}\n", ray.MarkRecord, i, strings.Repeat("x", 200))
	}
	fmt.Fprintf(&b, "%s{\"records\":%d}\n", ray.MarkDone, n)
	want := b.String()
	return func(_ context.Context, _ ray.JobSpec, _ map[string][]byte, log io.Writer) error {
		for rest := want; rest != ""; { // uneven pieces: lines span writes
			k := min(len(rest), 777)
			if _, err := io.WriteString(log, rest[:k]); err != nil {
				return err
			}
			rest = rest[k:]
		}
		return nil
	}, want
}

// awaitRecords submits a job and awaits it with a parser reading its log.
func awaitRecords(t *testing.T, f *raytest.Fake, runID string) (ray.Output, error) {
	t.Helper()
	c := client(t, f, "")
	id, _, err := c.Submit(context.Background(), spec(t, c, runID))
	if err != nil {
		t.Fatal(err)
	}
	ps := ray.NewParser(nil)
	job, err := c.Await(context.Background(), id, ray.AwaitOptions{Logs: ps, Sleep: noSleep})
	if err == nil && job.Status != ray.StatusSucceeded {
		t.Fatalf("job %+v", job)
	}
	out, perr := ps.Output()
	if perr != nil {
		t.Fatalf("parsing the log: %v", perr)
	}
	return out, err
}

func checkRecords(t *testing.T, out ray.Output, n int) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range out.Records {
		seen[string(r)] = true
	}
	if !out.Done || len(out.Records) != n || len(seen) != n {
		t.Fatalf("%d records (%d distinct), done %v; want each of %d once", len(out.Records), len(seen), out.Done, n)
	}
}

// TestAwaitStreamsTheLogOnce: the log is read through the websocket, each
// byte once, however long it is: GET /logs (which Ray cuts to its last
// RAY_JOB_LOG_MAX_READ_BYTES) is not used while the stream works.
func TestAwaitStreamsTheLogOnce(t *testing.T) {
	f := raytest.New(t)
	exec, want := recordsJob(400)
	f.Exec, f.LogCap = exec, 4<<10 // GET /logs would lose all but the last 4 KiB
	out, err := awaitRecords(t, f, "q1-ray-0-tail")
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, out, 400)
	if got := f.LogBytesServed("tail"); got != int64(len(want)) || f.LogBytesServed("logs") != 0 {
		t.Fatalf("served %d bytes by the stream and %d by GET /logs; want the log's %d once, by the stream", got, f.LogBytesServed("logs"), len(want))
	}
}

// TestAwaitResumesABrokenStream: a stream that breaks mid-line is reopened
// and the bytes already read are skipped, so no record is lost or doubled.
func TestAwaitResumesABrokenStream(t *testing.T) {
	f := raytest.New(t)
	f.Exec, _ = recordsJob(200)
	f.BreakTailAt = 10_001
	out, err := awaitRecords(t, f, "q1-ray-0-break")
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, out, 200)
	streams := 0
	for _, call := range f.Calls() {
		if strings.HasSuffix(call, "/logs/tail") {
			streams++
		}
	}
	if streams < 2 {
		t.Fatalf("%d streams opened: the break was not exercised", streams)
	}
}

// TestAwaitWithoutTheWebsocket: a dashboard that refuses the websocket is
// read once with GET /logs after the job ended; a log Ray cut there is an
// error, not a silently shorter run.
func TestAwaitWithoutTheWebsocket(t *testing.T) {
	tests := []struct {
		name   string
		logCap int
		err    error
	}{
		{"whole log", 0, nil},
		{"log cut by Ray", 4 << 10, ray.ErrLogTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := raytest.New(t)
			exec, want := recordsJob(100)
			f.Exec, f.NoTail, f.LogCap = exec, true, tc.logCap
			out, err := awaitRecords(t, f, "q1-ray-0-notail")
			if !errors.Is(err, tc.err) {
				t.Fatalf("Await: %v, want %v", err, tc.err)
			}
			if tc.err != nil {
				return
			}
			checkRecords(t, out, 100)
			if got := f.LogBytesServed("logs"); got != int64(len(want)) {
				t.Fatalf("GET /logs served %d bytes; want the log's %d, once", got, len(want))
			}
		})
	}
}

// TestFakeEnforcesReadiness: the fake cluster fails a driver that logs a
// record before declaring its stages ready before its schedule's zero.
func TestFakeEnforcesReadiness(t *testing.T) {
	tests := []struct {
		name, log string
		ok        bool
	}{
		{"ready first", readyMeta + "\n" + ray.MarkRecord + "{}\n", true},
		{"record first", ray.MarkRecord + "{}\n" + readyMeta + "\n", false},
		{"zero before ready", ray.MarkMeta + `{"ready_unix_ns":30,"start_unix_ns":20}` + "\n", false},
		{"no ready time", ray.MarkMeta + `{"start_unix_ns":20}` + "\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := raytest.New(t)
			f.Exec = func(ctx context.Context, _ ray.JobSpec, _ map[string][]byte, log io.Writer) error {
				io.WriteString(log, tc.log)
				return nil
			}
			c := client(t, f, "")
			id, _, _ := c.Submit(context.Background(), spec(t, c, "q1-ray-0-ready"))
			job, err := c.Await(context.Background(), id, ray.AwaitOptions{Sleep: noSleep})
			if err != nil || (job.Status == ray.StatusSucceeded) != tc.ok {
				t.Fatalf("Await = %+v, %v; want succeeded %v", job, err, tc.ok)
			}
			if !tc.ok && !strings.Contains(job.Message, "contract") {
				t.Fatalf("message %q does not name the broken contract", job.Message)
			}
		})
	}
}
