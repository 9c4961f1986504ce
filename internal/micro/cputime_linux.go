package micro

import "golang.org/x/sys/unix"

// processCPU returns the CPU time consumed by all threads of the process.
func processCPU() (ns int64, ok bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}
