package micro

import (
	"encoding/json"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/fedavg"
	"github.com/sagebench/sagebench/internal/fedavg/fedavgtest"
)

// FuzzParseMachine feeds the probe cache's parser arbitrary bytes (the
// cache is a file anyone can edit): it never panics, and a file it
// accepts holds grids that fit a valid Machine whose auto counts are in
// [1, GOMAXPROCS], and that Revalidate takes without panicking.
func FuzzParseMachine(f *testing.F) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	key := currentKey()
	res, err := fedavg.Probe(fedavg.ProbeConfig{MaxWorkers: 2, Trial: fedavgtest.Quiet().Trial})
	if err != nil {
		f.Fatal(err)
	}
	good, err := json.Marshal(machineFile{Version: fedavg.ProbeVersion, Key: key, Machine: res.Machine, Grids: res.Grids, Probed: now})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"version":3,"grids":[{"dim":4096,"sizes":[16384],"workers":[1],"trials":[[[1]]],"rounds":[[[1]]]}]}`))
	f.Add([]byte(`{"version":3,"grids":[{"dim":4096,"sizes":[68719476736],"workers":[1],"trials":[[[1]]],"rounds":[[[1]]]}]}`))
	f.Add([]byte(`{"version":2,"grid":{"sizes":[1048576],"workers":[1,2],"trials":[[[1],[2]]]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		mf, _ := parseMachine(b, key, now, DefaultProbeMaxAge)
		if mf == nil {
			return
		}
		m := fedavg.FitMachine(mf.Grids)
		if err := m.Validate(); err != nil {
			t.Fatalf("an accepted cache fits an invalid machine: %v", err)
		}
		for _, c := range aggClients {
			for _, d := range aggDims {
				if w := m.Workers(c, d, fedavg.Auto); w < 1 || w > runtime.GOMAXPROCS(0) {
					t.Fatalf("auto at %d×%d = %d workers under %v", c, d, w, m)
				}
			}
		}
		// What the real trial can serve (fedavg's fedavgTrial): one input
		// of the largest size (at most 1 GiB) and the first grid's counts.
		for _, g := range mf.Grids {
			if g.Sizes[len(g.Sizes)-1] > 1<<30 || !slices.Equal(g.Workers, mf.Grids[0].Workers) {
				t.Fatalf("an accepted cache the real trial cannot measure: dim %d, sizes %v, workers %v (first %v)", g.Dim, g.Sizes, g.Workers, mf.Grids[0].Workers)
			}
		}
		cfg := fedavg.ProbeConfig{MaxWorkers: 2, Rounds: 3, Attempts: 1, Trial: fedavgtest.Quiet().Trial}
		if _, err := fedavg.Revalidate(cfg, mf.Grids); err != nil {
			t.Fatalf("revalidating an accepted cache: %v", err)
		}
	})
}
