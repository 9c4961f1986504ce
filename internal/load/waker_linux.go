package load

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// waker arms a kernel timer (timerfd) that the Go runtime's network
// poller watches. Nobody reads it: its only effect is that the poller's
// epoll_wait returns when it fires, so a runtime timer that is already due
// runs then instead of at the poller's next whole-millisecond timeout
// (runtime.netpoll rounds every sub-millisecond wait up to 1 ms). Arming
// costs one timerfd_settime; re-arming moves the one pending expiry and
// resets the descriptor's count, so that the next expiry is a new edge
// for the edge-triggered poller. (A periodic timerfd that nobody reads
// wakes the poller once only: measured, it left a 200 µs sleep 0.9 ms
// late at p50, as without it.)
type waker struct {
	f  *os.File // keeps the descriptor registered with the poller
	fd int
	at time.Time // the pending expiry (the driver's bookkeeping)
}

// newWaker returns a waker, or nil when the kernel has no timerfd.
func newWaker() *waker {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	// A non-blocking descriptor given to os.NewFile is registered with the
	// runtime's poller (edge-triggered): every expiry wakes it.
	return &waker{f: os.NewFile(uintptr(fd), "pacer-timerfd"), fd: fd}
}

// arm makes the poller wake d from now (at least 1 ns).
func (w *waker) arm(d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(max(d, 1)))}
	return unix.TimerfdSettime(w.fd, 0, &spec, nil)
}

func (w *waker) close() { _ = w.f.Close() }
