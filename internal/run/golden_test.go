package run

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/presenter"
	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
	"github.com/sagebench/sagebench/internal/workload/q2"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// fixedRun builds a deterministic Q2 run of two policies.
func fixedRun(t *testing.T) (*record.Run, workload.Outcome) {
	t.Helper()
	col := summary.NewCollector()
	phases := []summary.Phase{
		{Name: "fifo", Start: 0, End: 2 * time.Second, Scheduled: 20, ScheduleSpan: 2 * time.Second},
		{Name: "priority", Start: 2 * time.Second, End: 4 * time.Second, Scheduled: 20, ScheduleSpan: 2 * time.Second},
	}
	for pi, ph := range phases {
		for i := range 20 {
			typ, e2e := protocol.TypeLLM, 200+float64(i*10)
			if i%4 == 3 {
				typ, e2e = protocol.TypeEmbedding, 10+float64(i)
			}
			at := int64(ph.Start) + int64(i)*100e6 + 1
			r := record.Request{Kind: "request", Type: typ, Phase: ph.Name, Tenant: "tenant-a", Priority: "normal",
				Seq: pi*20 + i, IntendedNS: at, SentNS: at + 200e3, EndNS: at + int64(e2e*1e6), E2EMs: e2e,
				ServiceMs: e2e - 0.2, LagMs: 0.2, OK: !(pi == 1 && i == 5), Status: 200}
			if typ == protocol.TypeLLM {
				r.FirstToken, r.TTFTMs = at+40e6, 40+float64(pi*5)
				r.TokenNS = []int64{at + 40e6, at + 50e6, at + 62e6}
				r.TPOTMs = 11
			}
			r.SLOMet = r.OK && e2e < 350
			col.Add(r)
		}
	}
	run := &record.Run{RunID: "q2-sage-0-0123abcd", Workload: "Q2", Name: "ControlMix", Entry: "control_plane",
		Backend: "sage", Seed: 42, Complete: true, ConfigHash: "c0ffee", Target: "embedded reference stack at http://127.0.0.1:1234",
		LoadMode: "open-loop", StartedAt: time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC),
		EndedAt: time.Date(2026, 11, 29, 15, 0, 4, 0, time.UTC),
		Environment: record.Environment{GoVersion: "go1.26.8", OS: "linux", Arch: "amd64", CPUModel: "Test CPU",
			Cores: 2, MemoryMiB: 1024, Version: "devel", Commit: "abc"}}
	crit := result.Def{Name: "best_critical_ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}
	o := workload.Outcome{Phases: phases, LoadMode: "open-loop",
		Result: result.New("priority cut critical-class p99 TTFT from 45 ms (fifo) to 40 ms", crit.Measure(40, 10, "").WithReason("under priority"))}
	q := q2.Spec().New(false)
	(&Runner{}).finish(run, runconfig.Resolved{Spec: q2.Spec(), Workload: q, Shared: runconfig.DefaultShared()}, o, col, true)
	return run, o
}

func TestGoldenRecords(t *testing.T) {
	run, o := fixedRun(t)
	p := presenter.Run{Record: run, Spec: q2.Spec(), Phases: o.Phases}
	var md, bench, table bytes.Buffer
	presenter.Markdown(&md, p)
	golden(t, "summary.md.golden", md.Bytes())
	hdr := record.BenchHeader{GOOS: "linux", GOARCH: "amd64", Pkg: "github.com/sagebench/sagebench/internal/workload", CPU: "Test CPU"}
	if err := record.WriteBench(&bench, hdr, presenter.BenchLines(p, nil)); err != nil {
		t.Fatal(err)
	}
	golden(t, "bench.txt.golden", bench.Bytes())
	presenter.EndTable(&table, p)
	golden(t, "table.txt.golden", table.Bytes())
	if !strings.HasPrefix(md.String(), "# Q2 ControlMix — q2-sage-0-0123abcd\n\n**Answer:** priority cut") {
		t.Errorf("summary.md does not start with the answer:\n%s", md.String())
	}
	if !run.Valid || run.Summary.Requests != 40 || run.Summary.Failed != 1 {
		t.Errorf("valid %v (%v), requests %d, failed %d", run.Valid, run.InvalidReasons, run.Summary.Requests, run.Summary.Failed)
	}
}

func TestConfigHash(t *testing.T) {
	resolve := func(mut func(s *runconfig.Shared)) runconfig.Resolved {
		s := runconfig.DefaultShared()
		mut(&s)
		r, _, err := runconfig.Resolve(q2.Spec(), s, nil, workload.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := resolve(func(*runconfig.Shared) {})
	if len(base.ConfigHash) != 64 {
		t.Fatalf("hash %q", base.ConfigHash)
	}
	if r := resolve(func(s *runconfig.Shared) { s.OutputDir, s.Repeat = "elsewhere", 3 }); r.ConfigHash != base.ConfigHash {
		t.Error("output_dir or repeat changed the config hash")
	}
	for name, mut := range map[string]func(*runconfig.Shared){
		"seed": func(s *runconfig.Shared) { s.Seed = 1 }, "quick": func(s *runconfig.Shared) { s.Quick = true },
		"validity": func(s *runconfig.Shared) { s.Validity.MaxLagP99Ms = 9 }, "target": func(s *runconfig.Shared) { s.Target.URL = "http://127.0.0.1:1" },
	} {
		if resolve(mut).ConfigHash == base.ConfigHash {
			t.Errorf("%s did not change the config hash", name)
		}
	}
	if !bytes.Contains(base.RunConfig, []byte(`"experiment":"Q2"`)) || !bytes.Contains(base.RunConfig, []byte(`"llm_e2e":"3s"`)) || !bytes.Contains(base.RunConfig, []byte(`"rounds":2`)) {
		t.Errorf("run_config %s", base.RunConfig)
	}
}
