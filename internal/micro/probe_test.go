package micro

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/fedavg"
	"github.com/sagebench/sagebench/internal/fedavg/fedavgtest"
)

// simOptions resolves auto against a simulated machine, with the cache in
// dir and the cache's clock at now.
func simOptions(dir string, m *fedavgtest.Machine, now time.Time) Options {
	return Options{Auto: AutoProbe, MachineCache: filepath.Join(dir, "probe.json"),
		probeConfig: fedavg.ProbeConfig{MaxWorkers: 2, Trial: m.Trial}, clock: func() time.Time { return now }}
}

func readCache(t *testing.T, path string) machineFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var mf machineFile
	if err := json.Unmarshal(b, &mf); err != nil {
		t.Fatal(err)
	}
	return mf
}

// TestPoisonedProbeCacheRecovers is the poisoned-probe test: a cache
// written while the machine was loaded (a probe under load, or a file
// claiming max_workers 1) must not keep workers=auto at one worker once
// the machine is quiet, and a quiet cache must survive a loaded start.
func TestPoisonedProbeCacheRecovers(t *testing.T) {
	day := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		poison  func(t *testing.T, dir string) // writes the cache
		now     *fedavgtest.Machine
		at      time.Time
		source  string
		outcome fedavg.Outcome
		why     string
		workers int // auto's choice at 512×8192
	}{
		{name: "probe taken under load, quiet now", poison: probeWith(fedavgtest.Loaded(), day),
			now: fedavgtest.Quiet(), at: day.Add(time.Hour), source: SourceCached, outcome: fedavg.Reprobed, why: "cached", workers: 2},
		{name: "file claiming max_workers 1, no trials", poison: claimOneWorker(false),
			now: fedavgtest.Quiet(), at: day, source: SourceProbed, why: "no usable trials", workers: 2},
		{name: "file claiming max_workers 1, empty grid", poison: claimOneWorker(true),
			now: fedavgtest.Quiet(), at: day, source: SourceCached, outcome: fedavg.Reprobed, why: "too few trials", workers: 2},
		{name: "quiet probe, loaded now: kept", poison: probeWith(fedavgtest.Quiet(), day),
			now: fedavgtest.Loaded(), at: day.Add(time.Hour), source: SourceCached, outcome: fedavg.Agrees, why: "busier now", workers: 2},
		{name: "loaded probe expires after 7 days", poison: probeWith(fedavgtest.Loaded(), day),
			now: fedavgtest.Quiet(), at: day.Add(8 * 24 * time.Hour), source: SourceProbed, why: "expired", workers: 2},
		{name: "another OS kernel", poison: rekey(probeWith(fedavgtest.Loaded(), day), "5.10.0-old"),
			now: fedavgtest.Quiet(), at: day, source: SourceProbed, why: `os release "5.10.0-old"`, workers: 2},
		{name: "probe that never agrees: fallback, named", poison: func(*testing.T, string) {},
			now: &fedavgtest.Machine{Drift: 0.05}, at: day, source: SourceFallback, why: "failed its checks", workers: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.poison(t, dir)
			o := simOptions(dir, tc.now, tc.at)
			p := ResolveProbe(o, false)
			if p.Source != tc.source || p.Outcome != tc.outcome || !strings.Contains(p.Why, tc.why) {
				t.Fatalf("source %q outcome %q why %q; want %q %q %q", p.Source, p.Outcome, p.Why, tc.source, tc.outcome, tc.why)
			}
			if got := p.Machine.Workers(512, 8192, fedavg.Auto); got != tc.workers {
				t.Errorf("auto at 512×8192: %d workers under %v, want %d", got, p.Machine, tc.workers)
			}
			if !strings.Contains(p.Choices(), "clients=512/dim=8192:2") || !strings.Contains(p.Summary(), tc.why) {
				t.Errorf("summary %q, choices %q", p.Summary(), p.Choices())
			}
			mf := readCache(t, o.MachineCache)
			if len(mf.History) == 0 || (p.Source != SourceFallback && !mf.Machine.Equal(p.Machine)) {
				t.Errorf("cache holds %v (history %d), resolved %v", mf.Machine, len(mf.History), p.Machine)
			}
			if p.Source != SourceFallback {
				return
			}
			// The inconsistent trials were kept, not used; a quiet start heals them.
			again := ResolveProbe(simOptions(dir, fedavgtest.Quiet(), tc.at), false)
			if again.Source != SourceCached || again.Outcome != fedavg.Reprobed || again.Machine.Workers(512, 8192, fedavg.Auto) != 2 ||
				!strings.Contains(again.Why, "failed its checks") {
				t.Errorf("after an inconsistent probe, a quiet start gave %s %s %v (%s)", again.Source, again.Outcome, again.Machine, again.Why)
			}
		})
	}
}

// probeWith writes the cache as a probe of m at time at would.
func probeWith(m *fedavgtest.Machine, at time.Time) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		p := ResolveProbe(simOptions(dir, m, at), false)
		if p.Source != SourceProbed {
			t.Fatalf("set-up probe: %s (%s)", p.Source, p.Why)
		}
	}
}

// claimOneWorker writes a hand-made cache that claims max_workers 1,
// with no grid at all or with an empty one.
func claimOneWorker(withGrid bool) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		mf := &machineFile{Version: fedavg.ProbeVersion, Key: currentKey(),
			Machine: fedavg.Machine{BytesPerWorker: 16 << 20, MaxWorkers: 1}, Probed: time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)}
		if withGrid {
			mf.Grids = []fedavg.Grid{fedavg.NewGrid(4096, []int64{256 << 10, 1 << 20, 4 << 20, 16 << 20}, []int{1, 2})}
		}
		if err := writeMachine(filepath.Join(dir, "probe.json"), mf); err != nil {
			t.Fatal(err)
		}
	}
}

// rekey makes the cache written by write belong to another OS release.
func rekey(write func(*testing.T, string), release string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		write(t, dir)
		path := filepath.Join(dir, "probe.json")
		mf := readCache(t, path)
		mf.Key.OSRelease = release
		if err := writeMachine(path, &mf); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRealProbeReplacesAnInflatedCache runs the real FedAvg probe: a cache
// whose trials are ten times what this machine measures (a probe taken
// under heavy load) is re-probed at start, and its inflated evidence
// replaced by this machine's.
func TestRealProbeReplacesAnInflatedCache(t *testing.T) {
	cfg := fedavg.ProbeConfig{MaxWorkers: 2, Sizes: []int64{256 << 10, 512 << 10, 1 << 20}, Rounds: 3, Attempts: 2}
	res, err := fedavg.Probe(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gs := res.Grids
	for _, g := range gs {
		for i := range g.Trials {
			for j := range g.Trials[i] {
				for k := range g.Trials[i][j] {
					g.Trials[i][j][k] *= 10
				}
			}
		}
	}
	path := filepath.Join(t.TempDir(), "probe.json")
	mf := &machineFile{Version: fedavg.ProbeVersion, Key: currentKey(), Machine: fedavg.Machine{BytesPerWorker: 1 << 20, MaxWorkers: 1},
		Grids: gs, Probed: time.Now()}
	if err := writeMachine(path, mf); err != nil {
		t.Fatal(err)
	}
	p := ResolveProbe(Options{Auto: AutoProbe, MachineCache: path, probeConfig: cfg}, false)
	if p.Outcome != fedavg.Reprobed {
		t.Fatalf("outcome %q (%s), want reprobed", p.Outcome, p.Why)
	}
	if p.Source == SourceFallback { // inconsistent on a busy machine: not used, but kept
		t.Logf("busy machine: %s", p.Why)
	}
	for k, after := range readCache(t, path).Grids {
		for i := range after.Sizes {
			for j := range after.Workers {
				if after.Min(i, j) > gs[k].Min(i, j)/5 {
					t.Errorf("dim %d, cell %d,%d: %v ns after, %v inflated: not replaced", after.Dim, i, j, after.Min(i, j), gs[k].Min(i, j))
				}
			}
		}
	}
}

func TestRunNamesTheProbe(t *testing.T) {
	var out, log bytes.Buffer
	o := simOptions(t.TempDir(), fedavgtest.Quiet(), time.Now())
	o.Suite, o.Benchtime, o.Log = "fedavg", "1x", &log
	o.Filter = regexp.MustCompile(`Aggregate/clients=32/dim=2048/workers=(1|auto)$`)
	if err := Run(t.Context(), &out, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{probeLinePrefix, choiceLinePrefix + "clients=32/dim=2048:", "probed now"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(log.String(), "micro: workers=auto: ") {
		t.Errorf("log %q", log.String())
	}
	var rep bytes.Buffer
	if err := Report(&rep, &out, "run"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.String(), "probe: ") || !strings.Contains(rep.String(), "auto per shape: ") {
		t.Errorf("report does not name the probe:\n%s", rep.String())
	}
}
