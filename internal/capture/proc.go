package capture

import (
	"fmt"
	"sort"
	"time"

	"github.com/prometheus/procfs"
)

// ProcessSample is one /proc reading of one process.
type ProcessSample struct {
	At         time.Time `json:"at"`
	CPUPercent float64   `json:"cpu_percent"` // since the previous sample, of one core
	RSSBytes   int64     `json:"rss_bytes"`
	OpenFiles  int       `json:"open_files"`
}

// Process is the resource snapshot of one process during a capture.
type Process struct {
	PID        int             `json:"pid"`
	Name       string          `json:"name"`
	Samples    []ProcessSample `json:"samples"`
	CPUPercent Stats           `json:"cpu_percent"`
	MaxRSS     int64           `json:"max_rss_bytes"`
	MaxOpen    int             `json:"max_open_files"`
	Gone       bool            `json:"gone,omitempty"` // exited during the capture
}

// procSampler reads the named processes and PIDs from /proc at each tick.
type procSampler struct {
	fs    procfs.FS
	names map[string]bool
	pids  map[int]bool
	procs map[int]*Process
	cpu   map[int]float64 // CPU seconds at the previous sample
	prev  map[int]time.Time
}

func newProcSampler(names []string, pids []int) (*procSampler, error) {
	if len(names) == 0 && len(pids) == 0 {
		return nil, nil
	}
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("resource snapshot: %w", err)
	}
	ps := &procSampler{fs: fs, names: map[string]bool{}, pids: map[int]bool{},
		procs: map[int]*Process{}, cpu: map[int]float64{}, prev: map[int]time.Time{}}
	for _, n := range names {
		ps.names[n] = true
	}
	for _, p := range pids {
		ps.pids[p] = true
	}
	return ps, nil
}

// sample reads every matching process once.
func (ps *procSampler) sample(now time.Time) {
	if ps == nil {
		return
	}
	seen := map[int]bool{}
	for _, p := range ps.targets() {
		st, err := p.Stat()
		if err != nil {
			continue
		}
		seen[p.PID] = true
		pr := ps.procs[p.PID]
		if pr == nil {
			pr = &Process{PID: p.PID, Name: st.Comm}
			ps.procs[p.PID] = pr
		}
		s := ProcessSample{At: now, RSSBytes: int64(st.ResidentMemory())}
		if n, err := p.FileDescriptorsLen(); err == nil {
			s.OpenFiles = n
		}
		if t, ok := ps.prev[p.PID]; ok && now.After(t) {
			s.CPUPercent = 100 * (st.CPUTime() - ps.cpu[p.PID]) / now.Sub(t).Seconds()
		}
		ps.cpu[p.PID], ps.prev[p.PID] = st.CPUTime(), now
		pr.Samples = append(pr.Samples, s)
	}
	for pid, pr := range ps.procs {
		pr.Gone = !seen[pid]
	}
}

func (ps *procSampler) targets() []procfs.Proc {
	var out []procfs.Proc
	for pid := range ps.pids {
		if p, err := ps.fs.Proc(pid); err == nil {
			out = append(out, p)
		}
	}
	if len(ps.names) == 0 {
		return out
	}
	all, err := ps.fs.AllProcs()
	if err != nil {
		return out
	}
	for _, p := range all {
		if ps.pids[p.PID] {
			continue
		}
		if comm, err := p.Comm(); err == nil && ps.names[comm] {
			out = append(out, p)
		}
	}
	return out
}

// result summarises every process seen, by PID.
func (ps *procSampler) result() []Process {
	if ps == nil {
		return nil
	}
	out := make([]Process, 0, len(ps.procs))
	for _, pr := range ps.procs {
		var cpu []float64
		for i, s := range pr.Samples {
			if i > 0 {
				cpu = append(cpu, s.CPUPercent)
			}
			pr.MaxRSS = max(pr.MaxRSS, s.RSSBytes)
			pr.MaxOpen = max(pr.MaxOpen, s.OpenFiles)
		}
		pr.CPUPercent = Summarize(cpu)
		out = append(out, *pr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}
