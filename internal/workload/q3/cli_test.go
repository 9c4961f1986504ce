package q3_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/workload/workloadtest"
)

// TestQ3QuickOnEmbeddedStack runs Q3's quick scale through the CLI on the
// embedded stack: both policies run both phases, the victim's SLO
// attainment (the headline) is printed with the interference ratio, and
// per-tenant metrics reach the records.
func TestQ3QuickOnEmbeddedStack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 26 s of traffic")
	}
	res := workloadtest.Run(t, 3*time.Minute, "Q3", workloadtest.Loose, "--quick")
	if res.Code != 0 || len(res.Runs) != 1 {
		t.Fatalf("exit %d, %d runs\nstdout:\n%s\nstderr:\n%s", res.Code, len(res.Runs), res.Stdout, res.Stderr)
	}
	run := res.Runs[0]
	if p := run.Result.Primary; !strings.Contains(res.Stdout, "primary victim_slo_attainment:") || p.Name != "victim_slo_attainment" || !p.Measured() || p.Interval == nil {
		t.Errorf("primary %+v\n%s", p, res.Stdout)
	}
	for _, policy := range []string{"fifo", "fair_share"} {
		for _, key := range []string{".jain_fairness", ".victim_slo_attainment", ".victim_slo_attainment_alone", ".aggressor_429"} {
			if m, ok := run.Result.Metric(policy + key); !ok || !m.Measured() {
				t.Errorf("%s%s not measured: %+v", policy, key, m)
			}
		}
		// Quick's phases hold tens of victim requests: a p99 of fewer than
		// 100 is only bounded below, and a ratio of two such bounds is not
		// measurable — which the reason must say, never a number.
		if m, ok := run.Result.Metric(policy + ".interference_ratio"); !ok || m.State != "measured" && m.State != "bound" && !strings.Contains(m.Reason, "≥") {
			t.Errorf("%s.interference_ratio: %+v", policy, m)
		}
		for _, line := range []string{"/phase=alone/tenant=victim ", "/phase=contended/tenant=victim ", "/phase=contended/tenant=aggressor "} {
			if !strings.Contains(res.Bench, "BenchmarkQ3NoisyNeighbor/backend=sage/policy="+policy+line) {
				t.Errorf("bench.txt lacks policy=%s%s:\n%s", policy, line, res.Bench)
			}
		}
	}
	if !strings.Contains(res.Unified, `"config":"policy=fair_share"`) || !strings.Contains(res.Stdout, "Tenants") {
		t.Errorf("no per-policy unified row or tenant table")
	}
	checkRecomputeSeesTampering(t, res.Dirs[0])
}

// checkRecomputeSeesTampering: the recompute check (run by
// workloadtest.Run on every complete run) can fail — with a victim
// request of the contended phase dropped from requests.jsonl, the
// result recomputed from the directory is no longer run.json's.
func checkRecomputeSeesTampering(t *testing.T, dir string) {
	t.Helper()
	tampered := t.TempDir()
	for _, name := range []string{"run.json", "requests.jsonl"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "requests.jsonl" {
			lines := strings.SplitAfter(string(b), "\n")
			for i, l := range lines {
				if strings.Contains(l, `"phase":"fair_share.contended"`) && strings.Contains(l, `"tenant":"victim"`) {
					lines = append(lines[:i], lines[i+1:]...)
					break
				}
			}
			b = []byte(strings.Join(lines, ""))
		}
		if err := os.WriteFile(filepath.Join(tampered, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recorded, got, ok := workloadtest.Recompute(t, tampered)
	if !ok {
		t.Fatal("Q3 does not recompute")
	}
	if workloadtest.ResultDiff(recorded, got) == "" {
		t.Error("a victim request dropped from requests.jsonl left the recomputed result identical: the check cannot fail")
	}
}
