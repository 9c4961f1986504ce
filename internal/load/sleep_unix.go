//go:build linux || darwin || freebsd

package load

import (
	"syscall"
	"time"
)

// threadSleep blocks the calling OS thread for d (nanosleep), bypassing
// the runtime timer and its millisecond granularity.
func threadSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
