package micro

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/fedavg"
	"github.com/sagebench/sagebench/internal/record"
)

// ProbeInfo says which model workers=auto runs with and how it was
// chosen: the fallback constant, a fresh probe, or a cached probe
// revalidated at start.
type ProbeInfo struct {
	Machine fedavg.Machine
	// Source is "fallback", "probed" (a fresh probe) or "cached" (a
	// cached probe, revalidated: see Outcome).
	Source string
	// Outcome is what revalidation decided for a cached probe.
	Outcome fedavg.Outcome
	// Why says why: why there was no usable cache, which cell decided a
	// revalidation, or why the fallback was taken.
	Why string
	// Cost is the time spent probing or revalidating in this process.
	Cost time.Duration
	// File is the probe used (nil for the fallback); Path its cache
	// file ("" when not cached).
	File *machineFile
	Path string
}

// Sources of ProbeInfo.
const (
	SourceFallback = "fallback"
	SourceProbed   = "probed"
	SourceCached   = "cached"
)

// ResolveProbe returns the model workers=auto runs with, as o says: the
// fallback; or the cached probe of this machine revalidated against it
// now (fedavg.Revalidate: a probe taken under load is re-probed and
// healed, one taken on a quiet machine survives a busy start); or, when
// there is no usable cache (none, another machine, another probe version,
// older than o.ProbeMaxAge) or force is set, a fresh probe. A probe that
// fails its own consistency checks is not used: the fallback is, and the
// reason is in Why; its trials are cached all the same (the next start
// re-probes on top of them). The cache file is rewritten with every new
// trial.
func ResolveProbe(o Options, force bool) ProbeInfo {
	if o.Auto == AutoFallback {
		return ProbeInfo{Source: SourceFallback, Why: "--auto fallback"}
	}
	now := o.now()
	key := currentKey()
	var mf *machineFile
	why := "--force"
	switch {
	case force:
	case o.MachineCache == "":
		why = "no probe cache"
	default:
		mf, why = readMachine(o.MachineCache, key, now, o.probeMaxAge())
	}
	if mf == nil {
		return freshProbe(o, key, why)
	}
	return revalidate(o, key, mf)
}

func freshProbe(o Options, key machineKey, why string) ProbeInfo {
	load, meter := record.LoadAverage(), startBusy()
	res, err := fedavg.Probe(o.probeConfig)
	if err != nil {
		return ProbeInfo{Source: SourceFallback, Why: fmt.Sprintf("%s; the probe failed: %v", why, err)}
	}
	other, _ := meter.otherShare()
	now := o.now()
	mf := &machineFile{Version: fedavg.ProbeVersion, Key: key, Machine: res.Machine, Grids: res.Grids,
		Probed: now, LoadAvg: load, OtherCPU: other}
	mf.addEvent(probeEvent{Time: now, Outcome: SourceProbed, Reason: why, Machine: res.Machine,
		LoadAvg: load, OtherCPU: other, CostNs: res.Cost.Nanoseconds()})
	info := ProbeInfo{Machine: res.Machine, Source: SourceProbed, Why: why, Cost: res.Cost, File: mf}
	if !res.Consistent() {
		info = ProbeInfo{Source: SourceFallback, Cost: res.Cost, File: mf,
			Why: fmt.Sprintf("%s; the probe failed its checks after %d attempts (%s)", why, res.Attempts, res.Problems[0])}
	}
	info.save(o)
	return info
}

// revalidate checks the cached probe against the machine now; when that
// fails (a cache this probe cannot measure again), a fresh probe replaces
// the cache rather than leave every later start to the fallback.
func revalidate(o Options, key machineKey, mf *machineFile) ProbeInfo {
	load, meter := record.LoadAverage(), startBusy()
	rv, err := fedavg.Revalidate(o.probeConfig, mf.Grids)
	if err != nil {
		return freshProbe(o, key, fmt.Sprintf("revalidating the cached probe failed (%v)", err))
	}
	other, _ := meter.otherShare()
	mf.Grids, mf.Machine = rv.Result.Grids, rv.Result.Machine
	mf.addEvent(probeEvent{Time: o.now(), Outcome: string(rv.Outcome), Reason: rv.Reason, Machine: rv.Result.Machine,
		LoadAvg: load, OtherCPU: other, CostNs: rv.Result.Cost.Nanoseconds()})
	info := ProbeInfo{Machine: rv.Result.Machine, Source: SourceCached, Outcome: rv.Outcome, Why: rv.Reason,
		Cost: rv.Result.Cost, File: mf}
	if !rv.Result.Consistent() {
		info = ProbeInfo{Source: SourceFallback, Outcome: rv.Outcome, Cost: rv.Result.Cost, File: mf,
			Why: fmt.Sprintf("%s; the revalidated probe failed its checks (%s)", rv.Reason, rv.Result.Problems[0])}
	}
	info.save(o)
	return info
}

// save writes the probe's file to the cache, if there is one; a write
// error is noted in Why, not fatal.
func (p *ProbeInfo) save(o Options) {
	if o.MachineCache == "" || p.File == nil {
		return
	}
	if err := writeMachine(o.MachineCache, p.File); err != nil {
		p.Why += fmt.Sprintf(" (not cached: %v)", err)
		return
	}
	p.Path = o.MachineCache
}

// Summary is the one-line account of the probe: the model, where it came
// from, when and under what load it was probed, and this start's verdict.
func (p ProbeInfo) Summary() string {
	if p.Source == SourceFallback {
		s := fmt.Sprintf("fallback model (%v): %s", fedavg.Machine{}, p.Why)
		if p.Path != "" {
			s += "; trials kept in " + p.Path
		}
		return s
	}
	f := p.File
	s := fmt.Sprintf("%v; probed %s (load average %.2f, other processes %.0f%% of the CPUs)",
		p.Machine, stamp(f.Probed), f.LoadAvg, 100*f.OtherCPU)
	if p.Path != "" {
		s += ", cache " + p.Path
	}
	if p.Source == SourceCached {
		return s + fmt.Sprintf("; revalidated in %v: %s (%s)", p.Cost.Round(time.Millisecond), p.Outcome, p.Why)
	}
	return s + fmt.Sprintf("; probed now in %v (%s)", p.Cost.Round(time.Millisecond), p.Why)
}

// Choices is auto's worker count for every shape of the aggregation
// matrix under this probe, "clients=32/dim=2048:1 …".
func (p ProbeInfo) Choices() string {
	var b strings.Builder
	for _, c := range aggClients {
		for _, d := range aggDims {
			fmt.Fprintf(&b, " clients=%d/dim=%d:%d", c, d, p.Machine.Workers(c, d, fedavg.Auto))
		}
	}
	return strings.TrimSpace(b.String())
}

// Comment lines that name the probe in benchmark output; Go benchmark
// readers ignore them (they are neither results nor key: value lines) and
// Report prints them.
const (
	probeLinePrefix  = "# fedavg-probe: "
	choiceLinePrefix = "# fedavg-auto: "
)

// writeProbeLines names the probe in benchmark output.
func writeProbeLines(w io.Writer, p ProbeInfo) {
	fmt.Fprintf(w, "%s%s\n%s%s\n", probeLinePrefix, p.Summary(), choiceLinePrefix, p.Choices())
}

// WriteProbe describes a probe for `sagebench micro probe`: the summary,
// auto's choice per shape, per probed dimension the grid of fastest
// trials (with the gap to the second fastest) and the median paired ratio
// that decides, and the cache's history.
func WriteProbe(w io.Writer, p ProbeInfo) error {
	bw := &errWriter{w: w}
	fmt.Fprintf(bw, "probe: %s\nauto per shape: %s\n", p.Summary(), p.Choices())
	if p.File == nil {
		return bw.err
	}
	for _, g := range p.File.Grids {
		writeGrid(bw, g)
	}
	fmt.Fprintf(bw, "\nhistory (newest last):\n")
	for _, e := range p.File.History {
		fmt.Fprintf(bw, "- %s %s in %v, load average %.2f, other processes %.0f%%: %v",
			stamp(e.Time), e.Outcome, time.Duration(e.CostNs).Round(time.Millisecond), e.LoadAvg, 100*e.OtherCPU, e.Machine)
		if e.Reason != "" {
			fmt.Fprintf(bw, " (%s)", e.Reason)
		}
		fmt.Fprintln(bw)
	}
	return bw.err
}

// writeGrid prints one dimension's grid: per cell the fastest trial in µs
// (the second fastest, % slower) and, for more than one worker, the median
// paired ratio to one worker over the size's rounds (×0.85: 15 % faster).
func writeGrid(w io.Writer, g fedavg.Grid) {
	fmt.Fprintf(w, "\ndim %d: fastest trial per cell, µs (second fastest, %% slower); ×median paired ratio to 1 worker:\n\n| size | rounds |", g.Dim)
	for _, wk := range g.Workers {
		fmt.Fprintf(w, " %d worker(s) |", wk)
	}
	fmt.Fprintf(w, "\n|---:|---:|%s\n", strings.Repeat("---:|", len(g.Workers)))
	for i, size := range g.Sizes {
		fmt.Fprintf(w, "| %d KiB | %d |", size>>10, len(g.Rounds[i]))
		for j := range g.Workers {
			fmt.Fprintf(w, " %s", cellText(g.Trials[i][j]))
			if j > 0 && len(g.Rounds[i]) > 0 {
				fmt.Fprintf(w, " ×%.3f", g.Ratio(i, 0, j))
			}
			fmt.Fprint(w, " |")
		}
		fmt.Fprintln(w)
	}
}

func cellText(trials []float64) string {
	switch len(trials) {
	case 0:
		return "–"
	case 1:
		return fmt.Sprintf("%.1f", trials[0]/1e3)
	}
	return fmt.Sprintf("%.1f (+%.0f%%)", trials[0]/1e3, 100*(trials[1]/trials[0]-1))
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}
