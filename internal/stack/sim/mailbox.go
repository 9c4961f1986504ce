package sim

import (
	"sync"
	"sync/atomic"

	"github.com/sagebench/sagebench/internal/stack/engine"
)

// mailbox is the channel from an engine's callers to its one event loop:
// callers post closures that the loop runs in order, so the loop owns the
// engine's state without locks. close posts the nil sentinel, after which
// the loop drains what was posted before and exits, closing done.
type mailbox struct {
	cmds      chan func()
	done      chan struct{} // closed when the loop has exited
	closeOnce sync.Once
	closed    atomic.Bool
}

func (m *mailbox) init() {
	m.cmds = make(chan func(), 1024)
	m.done = make(chan struct{})
}

// close asks the loop to stop and waits until it has. It is safe to call
// more than once.
func (m *mailbox) close() {
	m.closeOnce.Do(func() {
		m.closed.Store(true)
		m.cmds <- nil // the loop drains what was posted before, then exits
	})
	<-m.done
}

// post hands cmd to the loop; it fails once the loop has exited.
func (m *mailbox) post(cmd func()) error {
	select {
	case <-m.done:
		return engine.ErrClosed
	default:
	}
	select {
	case m.cmds <- cmd:
		return nil
	case <-m.done:
		return engine.ErrClosed
	}
}

// do runs cmd on the loop and waits until it has run.
func (m *mailbox) do(cmd func()) error {
	ran := make(chan struct{})
	if err := m.post(func() { cmd(); close(ran) }); err != nil {
		return err
	}
	select {
	case <-ran:
		return nil
	case <-m.done:
		return engine.ErrClosed
	}
}
