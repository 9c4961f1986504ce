package record

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// RequestWriter streams Requests to a JSON-lines file while a run goes. It
// buffers, flushes every FlushEvery (and on Close), and is safe for
// concurrent use. Each line is written whole, so a crash leaves at most a
// missing tail, never a line cut by another.
type RequestWriter struct {
	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	n     int
	err   error
	shut  bool // closed: later writes are refused
	stop  chan struct{}
	done  chan struct{}
	close sync.Once
}

// DefaultFlushEvery is how often a RequestWriter flushes its buffer.
const DefaultFlushEvery = time.Second

// CreateRequestWriter creates (truncating) path and starts the periodic
// flush. flushEvery <= 0 means DefaultFlushEvery.
func CreateRequestWriter(path string, flushEvery time.Duration) (*RequestWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	if flushEvery <= 0 {
		flushEvery = DefaultFlushEvery
	}
	rw := &RequestWriter{f: f, w: bufio.NewWriterSize(f, 64<<10),
		stop: make(chan struct{}), done: make(chan struct{})}
	go rw.flushLoop(flushEvery)
	return rw, nil
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

// Write appends one request line. The first error sticks and is returned
// by every later call and by Close. After Close, Write fails.
func (rw *RequestWriter) Write(r Request) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding request %s: %w", r.ID, err)
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err != nil {
		return rw.err
	}
	if rw.shut {
		return fmt.Errorf("writing request %s: %s is already closed", r.ID, rw.f.Name())
	}
	if _, err := rw.w.Write(append(line, '\n')); err != nil {
		rw.err = fmt.Errorf("writing %s: %w", rw.f.Name(), err)
		return rw.err
	}
	rw.n++
	return nil
}

// Count returns the number of lines written so far.
func (rw *RequestWriter) Count() int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.n
}

// Flush writes the buffered lines to the file.
func (rw *RequestWriter) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.flushLocked()
}

func (rw *RequestWriter) flushLocked() error {
	if rw.err != nil || rw.shut {
		return rw.err
	}
	if err := rw.w.Flush(); err != nil {
		rw.err = fmt.Errorf("writing %s: %w", rw.f.Name(), err)
	}
	return rw.err
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
