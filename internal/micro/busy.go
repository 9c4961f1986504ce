package micro

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// busyMeter measures how much of the machine's CPU other processes used
// over an interval: the busy time of all CPUs (/proc/stat) minus this
// process's CPU time, divided by wall time × CPUs. /proc/stat counts in
// clock ticks (10 ms), so over a probe of a few hundred milliseconds it is
// good to a few percent. Where /proc/stat is missing it is not measurable.
type busyMeter struct {
	wall     time.Time
	busy, me time.Duration
	ok       bool
}

func startBusy() busyMeter {
	b, ok1 := machineBusy()
	me, ok2 := processCPU()
	return busyMeter{wall: time.Now(), busy: b, me: time.Duration(me), ok: ok1 && ok2}
}

// otherShare is the share of all CPUs [0, 1] other processes used since
// start; ok is false when it could not be measured.
func (m busyMeter) otherShare() (float64, bool) {
	b, ok1 := machineBusy()
	me, ok2 := processCPU()
	wall := time.Since(m.wall)
	if !m.ok || !ok1 || !ok2 || wall <= 0 {
		return 0, false
	}
	other := (b - m.busy) - (time.Duration(me) - m.me)
	share := float64(other) / float64(wall) / float64(runtime.NumCPU())
	return min(max(share, 0), 1), true
}

// machineBusy is the non-idle time of all CPUs since boot (user, nice,
// system, irq, softirq and steal from the first line of /proc/stat).
func machineBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	var ticks int64
	for _, k := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
		v, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond, true // USER_HZ is 100 on Linux
}
