//go:build !(linux || darwin || freebsd)

package load

import (
	"runtime"
	"time"
)

// threadSleep yields instead where no thread sleep is available.
func threadSleep(time.Duration) { runtime.Gosched() }
