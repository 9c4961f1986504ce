package record

import (
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"
)

// RequestWriter streams Requests to a JSON-lines file while a run goes. It
// is safe for concurrent use and line-atomic: lines are buffered whole and
// written whole (one write of whole lines per flush, every FlushEvery or
// every flushBytes), so the file only ever ends between lines, and a
// failed or short write is cut back to the last whole line. The first
// error sticks: every later Write returns it, Failed is closed so that the
// run can stop at once (a full disk shows within one FlushEvery), and
// Close returns it.
type RequestWriter struct {
	mu     sync.Mutex
	f      lineFile
	buf    []byte // whole lines not yet written
	off    int64  // bytes of whole lines in the file
	n      int
	err    error
	failed chan struct{}
	shut   bool // closed: later writes are refused
	stop   chan struct{}
	done   chan struct{}
	close  sync.Once
}

// lineFile is what RequestWriter needs of its file (an *os.File).
type lineFile interface {
	io.Writer
	Truncate(size int64) error
	Sync() error
	Close() error
	Name() string
}

// DefaultFlushEvery is how often a RequestWriter flushes its buffer.
const DefaultFlushEvery = time.Second

// flushBytes is the buffered size that triggers a write before the tick.
const flushBytes = 64 << 10

// CreateRequestWriter creates (truncating) path and starts the periodic
// flush. flushEvery <= 0 means DefaultFlushEvery.
func CreateRequestWriter(path string, flushEvery time.Duration) (*RequestWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	return newRequestWriter(f, flushEvery), nil
}

func newRequestWriter(f lineFile, flushEvery time.Duration) *RequestWriter {
	if flushEvery <= 0 {
		flushEvery = DefaultFlushEvery
	}
	rw := &RequestWriter{f: f, buf: make([]byte, 0, 2*flushBytes), failed: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	go rw.flushLoop(flushEvery)
	return rw
}

func (rw *RequestWriter) flushLoop(every time.Duration) {
	defer close(rw.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-rw.stop:
			return
		case <-t.C:
			rw.Flush()
		}
	}
}

// Write appends one request line (bounded, see Bound; encoded by
// AppendRequest, as encoding/json would). The first error
// sticks and is returned by every later call and by Close. After Close,
// Write fails.
func (rw *RequestWriter) Write(r Request) error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err != nil {
		return rw.err
	}
	if rw.shut {
		return fmt.Errorf("writing request %s: %s is already closed", r.ID, rw.f.Name())
	}
	r = Bound(r)
	line, err := AppendRequest(rw.buf, &r)
	if err != nil {
		return fmt.Errorf("encoding request %s: %w", r.ID, err)
	}
	rw.buf = append(line, '\n')
	rw.n++
	if len(rw.buf) >= flushBytes {
		return rw.flushLocked()
	}
	return nil
}

// Count returns the number of lines accepted so far.
func (rw *RequestWriter) Count() int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.n
}

// Failed is closed at the first write error; Err then returns it.
func (rw *RequestWriter) Failed() <-chan struct{} { return rw.failed }

// Err returns the first write error, or nil.
func (rw *RequestWriter) Err() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.err
}

// Flush writes the buffered lines to the file.
func (rw *RequestWriter) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.flushLocked()
}

func (rw *RequestWriter) flushLocked() error {
	if rw.err != nil || rw.shut || len(rw.buf) == 0 {
		return rw.err
	}
	n, err := rw.f.Write(rw.buf)
	if err == nil && n < len(rw.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		rw.err = fmt.Errorf("writing %s: %w", rw.f.Name(), err)
		if n > 0 { // leave only whole lines behind
			if terr := rw.f.Truncate(rw.off); terr != nil {
				rw.err = fmt.Errorf("%w (and cutting it back to its last whole line: %v)", rw.err, terr)
			}
		}
		close(rw.failed)
		return rw.err
	}
	rw.off += int64(n)
	if cap(rw.buf) > 4*flushBytes { // one huge line: do not keep its buffer
		rw.buf = make([]byte, 0, 2*flushBytes)
	}
	rw.buf = rw.buf[:0]
	return nil
}

// Close stops the periodic flush, flushes, fsyncs and closes the file. It
// is safe to call more than once.
func (rw *RequestWriter) Close() error {
	var err error
	rw.close.Do(func() {
		close(rw.stop)
		<-rw.done
		rw.mu.Lock()
		err = rw.flushLocked()
		rw.shut = true
		rw.mu.Unlock()
		if serr := rw.f.Sync(); err == nil && serr != nil {
			err = fmt.Errorf("syncing %s: %w", rw.f.Name(), serr)
		}
		if cerr := rw.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing %s: %w", rw.f.Name(), cerr)
		}
	})
	return err
}

// Bounds of one requests.jsonl line: whatever a target sends (2,000
// choices per chunk, a megabyte error body, a 9 MB X-Engine-Id), a line
// stays far below the reader's maxLine. Lengths are counted before JSON
// escaping, which at most sextuples them (\u00XX).
const (
	MaxTokenNS    = 100_000 // token timestamps kept (≈ 1.2 MB of JSON)
	MaxErrorBytes = 2048    // bytes of Error kept
	MaxNoteBytes  = 2048    // bytes of Note kept
	MaxFieldBytes = 256     // bytes of every other string field kept (engine, node, ids, labels)
	MaxTries      = 32      // attempts kept in Tries (the first ones)
)

// Bound returns r cut to the line bounds: TokenNS keeps its first
// MaxTokenNS−1 entries and its last (TokenNSDropped counts the rest),
// Error and Note their first MaxErrorBytes / MaxNoteBytes, every other
// string MaxFieldBytes (each on a UTF-8 boundary, plus "…").
func Bound(r Request) Request {
	if n := len(r.TokenNS); n > MaxTokenNS {
		kept := make([]int64, MaxTokenNS)
		copy(kept, r.TokenNS[:MaxTokenNS-1])
		kept[MaxTokenNS-1] = r.TokenNS[n-1]
		r.TokenNS, r.TokenNSDropped = kept, r.TokenNSDropped+n-MaxTokenNS
	}
	r.Error, r.Note = cutString(r.Error, MaxErrorBytes), cutString(r.Note, MaxNoteBytes)
	if len(r.Tries) > MaxTries {
		r.Tries = r.Tries[:MaxTries:MaxTries]
	}
	for i := range r.Tries {
		if len(r.Tries[i].ErrorClass) > MaxFieldBytes {
			r.Tries = append([]Try(nil), r.Tries...) // not the caller's array
			for k := range r.Tries {
				r.Tries[k].ErrorClass = cutString(r.Tries[k].ErrorClass, MaxFieldBytes)
			}
			break
		}
	}
	for _, f := range []*string{&r.ID, &r.Kind, &r.Type, &r.Stage, &r.TxnID, &r.Phase, &r.Tenant,
		&r.Priority, &r.Model, &r.ErrorClass, &r.Engine, &r.Node} {
		*f = cutString(*f, MaxFieldBytes)
	}
	return r
}

// cutString keeps the first n bytes of s (on a UTF-8 boundary) plus "…".
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// CheckPeer reports a number in r that no harness writes: a negative
// latency, offset or count (JSON carries no NaN or ±Inf). A record from
// a peer — a load node of --nodes — that fails it is refused, never
// summarised (a worker's e2e_ms of −5 ms reached the summary). The lag
// may be negative (a send ahead of its schedule).
func CheckPeer(r Request) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"e2e_ms", r.E2EMs}, {"service_ms", r.ServiceMs}, {"ttft_ms", r.TTFTMs}, {"tpot_ms", r.TPOTMs},
		{"ttfat_ms", r.TTFATMs}, {"server_ttft_ms", r.ServerTTFTMs}, {"server_e2e_ms", r.ServerE2EMs}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("request %s: %s %v", r.ID, f.name, f.v)
		}
	}
	if r.QueueMs != nil && (*r.QueueMs < 0 || math.IsNaN(*r.QueueMs) || math.IsInf(*r.QueueMs, 0)) {
		return fmt.Errorf("request %s: queue_ms %v", r.ID, *r.QueueMs)
	}
	if math.IsNaN(r.LagMs) || math.IsInf(r.LagMs, 0) {
		return fmt.Errorf("request %s: lag_ms %v", r.ID, r.LagMs)
	}
	if r.IntendedNS < 0 || r.SentNS < 0 || r.EndNS < 0 || r.FirstByte < 0 || r.FirstToken < 0 || r.FirstAnswerToken < 0 {
		return fmt.Errorf("request %s: a negative time offset", r.ID)
	}
	if r.PromptTok < 0 || r.OutputTok < 0 || r.InputTokens < 0 || r.OutputTokens < 0 || r.Retries < 0 || r.TokenNSDropped < 0 {
		return fmt.Errorf("request %s: a negative count", r.ID)
	}
	return nil
}
