//go:build unix

package dataflow_test

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time this process has used, so
// benchmarks can report CPU per record, which stays meaningful when other
// work shares the machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
