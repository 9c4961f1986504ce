package ray

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRestWaitsForTheWatcher: the fallback read of a log (no websocket)
// waits for the job's end as the watcher saw it and then reads GET /logs
// from the offset once; it never polls the job's status itself, so a run
// without the websocket does not double the dashboard's status requests.
func TestRestWaitsForTheWatcher(t *testing.T) {
	var status, logs atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/jobs/j1":
			status.Add(1)
			_, _ = w.Write([]byte(`{"submission_id":"j1","status":"SUCCEEDED"}`))
		case "/api/jobs/j1/logs":
			logs.Add(1)
			_, _ = w.Write([]byte(`{"logs":"first line\nsecond line\n"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := NewClient(Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	end := newJobEnd()
	tl := &tail{c: c, id: "j1", w: &out, o: &AwaitOptions{}, end: end, off: int64(len("first line\n"))}
	done := make(chan error, 1)
	go func() { done <- tl.rest(context.Background()) }()
	select {
	case err := <-done:
		t.Fatalf("rest returned before the job ended: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	end.mark()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out.String() != "second line\n" || status.Load() != 0 || logs.Load() != 1 {
		t.Fatalf("wrote %q after %d status and %d log requests; want the rest of the log, 0 and 1", out.String(), status.Load(), logs.Load())
	}
	gone := newJobEnd()
	gone.abandon()
	if err := (&tail{c: c, id: "j1", w: &out, o: &AwaitOptions{}, end: gone}).rest(context.Background()); err == nil || logs.Load() != 1 {
		t.Errorf("rest of an abandoned job: %v after %d log reads, want an error and no read", err, logs.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (&tail{c: c, id: "j1", w: &out, o: &AwaitOptions{}, end: newJobEnd()}).rest(ctx); err != context.Canceled {
		t.Errorf("rest with its context done: %v, want context.Canceled", err)
	}
}
