package micro

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/sagebench/sagebench/internal/fedavg"
	"github.com/sagebench/sagebench/internal/record"
)

// Ways of resolving workers=auto (Options.Auto).
const (
	AutoProbe    = "probe"    // measure the machine (fedavg.Probe), cached
	AutoFallback = "fallback" // the constant model of fedavg.ResolveWorkers
)

// machineKey identifies what a probe holds for: another CPU, kernel or
// GOMAXPROCS needs a new probe.
type machineKey struct {
	GOARCH     string `json:"goarch"`
	CPU        string `json:"cpu"`
	Kernel     string `json:"kernel"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

func currentKey() machineKey {
	return machineKey{GOARCH: runtime.GOARCH, CPU: cpuName(), Kernel: fedavg.Kernel(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
}

// machineFile is the probe cache: the Machine and the evidence behind it.
type machineFile struct {
	Key     machineKey     `json:"key"`
	Machine fedavg.Machine `json:"machine"`
	Sizes   []int64        `json:"sizes"`
	Workers []int          `json:"workers"`
	NsPerOp [][]float64    `json:"ns_per_op"`
	CostNs  int64          `json:"cost_ns"`
	Probed  time.Time      `json:"probed"`
}

// resolveMachine returns the Machine for workers=auto as o says: the
// fallback, the cached probe of this machine, or a new probe (written to
// the cache). It logs one line saying which.
func resolveMachine(o Options) fedavg.Machine {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	if o.Auto == AutoFallback {
		fmt.Fprintf(log, "micro: workers=auto: fallback model (%v)\n", fedavg.Machine{})
		return fedavg.Machine{}
	}
	key := currentKey()
	if mf, ok := readMachine(o.MachineCache, key); ok {
		fmt.Fprintf(log, "micro: workers=auto: %v (cached probe from %s, %s)\n", mf.Machine, mf.Probed.UTC().Format(time.RFC3339), o.MachineCache)
		return mf.Machine
	}
	res, err := fedavg.Probe(fedavg.ProbeConfig{})
	if err != nil {
		fmt.Fprintf(log, "micro: workers=auto: probe failed (%v); fallback model (%v)\n", err, fedavg.Machine{})
		return fedavg.Machine{}
	}
	fmt.Fprintf(log, "micro: workers=auto: %v (probed in %v)\n", res.Machine, res.Cost.Round(time.Millisecond))
	if o.MachineCache != "" {
		mf := machineFile{Key: key, Machine: res.Machine, Sizes: res.Sizes, Workers: res.Workers, NsPerOp: res.NsPerOp, CostNs: res.Cost.Nanoseconds(), Probed: time.Now()}
		if err := writeMachine(o.MachineCache, mf); err != nil {
			fmt.Fprintf(log, "micro: probe not cached: %v\n", err)
		}
	}
	return res.Machine
}

// readMachine reads the cache at path; a missing, unreadable or foreign
// cache (another key) is no cache.
func readMachine(path string, key machineKey) (machineFile, bool) {
	var mf machineFile
	if path == "" {
		return mf, false
	}
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &mf) != nil || mf.Key != key || mf.Machine.Validate() != nil {
		return mf, false
	}
	return mf, true
}

func writeMachine(path string, mf machineFile) error {
	b, err := json.MarshalIndent(mf, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return record.WriteFileAtomic(path, append(b, '\n'))
}
