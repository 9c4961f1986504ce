package micro

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/fedavg"
	"github.com/sagebench/sagebench/internal/record"
)

// Ways of resolving workers=auto (Options.Auto).
const (
	AutoProbe    = "probe"    // measure the machine (fedavg.Probe), cached and revalidated
	AutoFallback = "fallback" // the constant model of fedavg.ResolveWorkers
)

// DefaultProbeMaxAge is how long a cached probe lives before it is
// discarded and the machine probed afresh (Options.ProbeMaxAge).
const DefaultProbeMaxAge = 7 * 24 * time.Hour

// machineKey identifies what a probe holds for: another CPU, instruction
// kernel (avx512/avx2/portable), OS kernel release or GOMAXPROCS needs a
// new probe.
type machineKey struct {
	GOARCH     string `json:"goarch"`
	CPU        string `json:"cpu"`
	Kernel     string `json:"kernel"`
	OSRelease  string `json:"os_release"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

func currentKey() machineKey {
	return machineKey{GOARCH: runtime.GOARCH, CPU: cpuName(), Kernel: fedavg.Kernel(),
		OSRelease: osRelease(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
}

// osRelease is the running OS kernel's release, "" where unknown.
func osRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// machineFile is the probe cache: the grids of trials (one per probed
// dimension), the Machine fitted to them and how it came to be.
type machineFile struct {
	Version int            `json:"version"` // fedavg.ProbeVersion
	Key     machineKey     `json:"key"`
	Machine fedavg.Machine `json:"machine"` // refitted from Grids on every use
	Grids   []fedavg.Grid  `json:"grids"`
	// Probed is when the grid was first probed; merges and re-probes keep
	// it, so that the fastest trials of an old machine expire with it.
	Probed time.Time `json:"probed"`
	// LoadAvg and OtherCPU describe the machine during the first probe:
	// the 1-minute load average and the share of all CPUs that other
	// processes used while it ran.
	LoadAvg  float64 `json:"loadavg_1m"`
	OtherCPU float64 `json:"other_cpu"`
	// History lists the latest probes and revalidations, newest last.
	History []probeEvent `json:"history"`
}

// probeEvent is one probe or revalidation of a cached grid.
type probeEvent struct {
	Time     time.Time      `json:"time"`
	Outcome  string         `json:"outcome"` // probed, or a fedavg.Outcome
	Reason   string         `json:"reason,omitempty"`
	Machine  fedavg.Machine `json:"machine"`
	LoadAvg  float64        `json:"loadavg_1m"`
	OtherCPU float64        `json:"other_cpu"`
	CostNs   int64          `json:"cost_ns"`
}

const maxHistory = 10

// maxMachineFile bounds the cache file read: a full cache (8 dims, 16
// sizes, 16 worker counts, 8 trials and 16 rounds each) is well below.
const maxMachineFile = 4 << 20

// readMachine reads the cache at path. It returns the file and "" when it
// holds a usable probe of this machine (key, version, age), else nil and
// why not.
func readMachine(path string, key machineKey, now time.Time, maxAge time.Duration) (*machineFile, string) {
	b, err := record.ReadBounded(path, maxMachineFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "no cached probe"
	}
	if err != nil {
		return nil, fmt.Sprintf("cache unreadable (%v)", err)
	}
	return parseMachine(b, key, now, maxAge)
}

// parseMachine checks a cache file's bytes as readMachine says.
func parseMachine(b []byte, key machineKey, now time.Time, maxAge time.Duration) (*machineFile, string) {
	var mf machineFile
	switch {
	case json.Unmarshal(b, &mf) != nil:
		return nil, "cache is not a probe file"
	case mf.Version != fedavg.ProbeVersion:
		return nil, fmt.Sprintf("cached probe of version %d, this is %d", mf.Version, fedavg.ProbeVersion)
	case mf.Key != key:
		return nil, fmt.Sprintf("cached probe is for another machine (%s)", keyDiff(mf.Key, key))
	case now.Sub(mf.Probed) > maxAge || mf.Probed.After(now.Add(time.Minute)):
		return nil, fmt.Sprintf("cached probe from %s has expired (older than %v)", stamp(mf.Probed), maxAge)
	case fedavg.ValidateGrids(mf.Grids) != nil:
		return nil, fmt.Sprintf("cached probe holds no usable trials (%v)", fedavg.ValidateGrids(mf.Grids))
	case len(mf.History) > maxHistory:
		return nil, fmt.Sprintf("cached probe has %d history entries, at most %d", len(mf.History), maxHistory)
	}
	return &mf, ""
}

// keyDiff names the fields in which two keys differ.
func keyDiff(old, cur machineKey) string {
	var d []string
	add := func(name, a, b string) {
		if a != b {
			d = append(d, fmt.Sprintf("%s %q, now %q", name, a, b))
		}
	}
	add("goarch", old.GOARCH, cur.GOARCH)
	add("cpu", old.CPU, cur.CPU)
	add("kernel", old.Kernel, cur.Kernel)
	add("os release", old.OSRelease, cur.OSRelease)
	add("GOMAXPROCS", fmt.Sprint(old.GOMAXPROCS), fmt.Sprint(cur.GOMAXPROCS))
	return strings.Join(d, "; ")
}

func writeMachine(path string, mf *machineFile) error {
	b, err := json.MarshalIndent(mf, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return record.WriteFileAtomic(path, append(b, '\n'))
}

func (mf *machineFile) addEvent(e probeEvent) {
	mf.History = append(mf.History, e)
	if n := len(mf.History); n > maxHistory {
		mf.History = mf.History[n-maxHistory:]
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
