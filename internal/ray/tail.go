package ray

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/coder/websocket"
)

// A job's log is read through the Jobs API's websocket
// GET /api/jobs/{id}/logs/tail, which streams the log from its start as
// the driver writes it (chunks of up to 10 lines or 20,000 characters)
// and closes normally once the job has ended and the log is read. Each
// byte is downloaded once: a stream that breaks while the job runs is
// reopened and the bytes already read (the offset) are skipped. GET
// /api/jobs/{id}/logs answers the whole log every time, and recent Ray
// versions cut it to its last RAY_JOB_LOG_MAX_READ_BYTES (16 MiB) behind
// a "[LOG TRUNCATED" line, so it is only the fallback: when the
// websocket is refused (a proxy without websockets), or its streams keep
// breaking after the job ended, the rest of the log from the offset is
// read from it once, after the job ended.

// MaxLogMessage bounds one websocket message. Ray sends up to 10 lines,
// or lines until more than 20,000 characters, and never splits a line
// (file_tail_iterator): a message is as long as the longest line in it,
// so the bound is a line's, far above any the driver writes.
const MaxLogMessage = 64 << 20

// truncatedMark starts the log GET /logs answers when Ray cut it.
const truncatedMark = "[LOG TRUNCATED"

// ErrLogTruncated is the fallback finding a log Ray cut.
var ErrLogTruncated = errors.New("ray: the job's log is longer than GET /api/jobs/{id}/logs returns (Ray keeps its last RAY_JOB_LOG_MAX_READ_BYTES), and the websocket /logs/tail that streams all of it was unavailable")

// tail follows one job's log into w.
type tail struct {
	c   *Client
	id  string
	w   io.Writer
	o   *AwaitOptions
	end *jobEnd // the job's end, as the watcher (or this tail) saw it
	off int64   // bytes of the log written to w
}

// errSink wraps a write error of the log's reader.
type errSink struct{ err error }

func (e errSink) Error() string { return e.err.Error() }
func (e errSink) Unwrap() error { return e.err }

// endedRetries is how many more streams are tried, once the job has
// ended, before the rest of the log is read with GET /logs.
const endedRetries = 2

// run streams the log to its end. It reopens a stream that broke (after
// a pause, from the offset); when the websocket is refused, or still
// breaks after the job ended, it reads the rest with GET /logs.
func (t *tail) run(ctx context.Context) error {
	pause, retries := t.o.MinPoll, endedRetries
	for {
		before := t.off
		clean, err := t.c.tailOnce(ctx, t.id, &t.off, t.w)
		var sink errSink
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &sink):
			return sink.err
		case IsStatus(err, http.StatusUnauthorized) || IsStatus(err, http.StatusForbidden):
			return err
		case refused(err):
			return t.rest(ctx)
		}
		job, jerr := t.c.Job(ctx, t.id)
		ended := jerr == nil && Terminal(job.Status)
		if ended {
			t.end.mark()
		}
		switch {
		case ended && clean:
			return nil
		case ended && retries == 0:
			return t.rest(ctx)
		case ended:
			retries--
		}
		if t.off > before {
			pause = t.o.MinPoll
		} else {
			pause = min(pause*2, t.o.MaxPoll)
		}
		t.o.Sleep(ctx, pause)
	}
}

// refused reports whether the websocket handshake was answered without
// an upgrade (a dashboard or proxy that does not serve it).
func refused(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status != http.StatusSwitchingProtocols
}

// tailPath is the websocket's path for job id.
func tailPath(id string) string { return "/api/jobs/" + url.PathEscape(id) + "/logs/tail" }

// tailOnce reads one websocket stream of job id's log: it skips the
// first *off bytes (read by an earlier stream), writes the rest to w and
// advances *off. clean is true when the server closed the stream
// normally. A handshake answered without an upgrade is an *APIError; a
// write error of w is an errSink.
func (c *Client) tailOnce(ctx context.Context, id string, off *int64, w io.Writer) (clean bool, err error) {
	path := tailPath(id)
	conn, resp, err := websocket.Dial(ctx, c.base+path, &websocket.DialOptions{HTTPClient: c.http, HTTPHeader: c.authHeader()})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			return false, &APIError{Method: http.MethodGet, Path: path, Status: resp.StatusCode, Body: clip(string(b), 300)}
		}
		return false, fmt.Errorf("ray: following the log of %s at %s: %w", id, c.base, err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(MaxLogMessage + 4*20000)
	skip := *off
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
				return true, nil
			}
			return false, fmt.Errorf("ray: the log stream of %s broke after %d bytes: %w", id, *off, err)
		}
		n := min(skip, int64(len(msg)))
		skip -= n
		if msg = msg[n:]; len(msg) == 0 {
			continue
		}
		if _, err := w.Write(msg); err != nil {
			return false, errSink{err}
		}
		*off += int64(len(msg))
	}
}

// rest waits for the job to end (as the watcher's polls see it: the tail
// does not poll the status a second time) and writes the log from the
// offset on, read with GET /logs.
func (t *tail) rest(ctx context.Context) error {
	if err := t.end.wait(ctx, t.id); err != nil {
		return err
	}
	logs, err := t.c.Logs(ctx, t.id)
	switch {
	case err != nil:
		return err
	case strings.HasPrefix(logs, truncatedMark):
		return ErrLogTruncated
	case int64(len(logs)) < t.off:
		return fmt.Errorf("ray: the log of %s holds %d bytes, fewer than the %d already streamed", t.id, len(logs), t.off)
	}
	if _, err := io.WriteString(t.w, logs[t.off:]); err != nil {
		return err
	}
	t.off = int64(len(logs))
	return nil
}
