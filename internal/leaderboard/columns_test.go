package leaderboard

import (
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
)

func row(id, cfg, ts string, seed int64, primary, unit string, v float64) Row {
	return Row{Valid: true, Config: cfg, Unified: record.Unified{Workload: "Q4", Backend: "sage", RunID: id, Seed: seed, Nodes: 1, Parallelism: 2,
		Timestamp: ts, ConfigHash: "h4", PrimaryMetric: primary, PrimaryUnit: unit, PrimaryState: "measured", PrimaryValue: &v}}
}

// TestEachColumnOneMetric: Q4's per-pool-size rows (max rate, req/s) and
// its run row (scaling efficiency, ×) sit in tables of their own, each
// column headed by the one metric and unit it holds.
func TestEachColumnOneMetric(t *testing.T) {
	c := &Collection{Rows: []Row{
		row("a", "", "2026-12-01T10:00:00Z", 1, "scaling_efficiency", "x", 0.9),
		row("a/engines=1", "engines=1", "2026-12-01T10:00:00Z", 1, "max_rate", "req/s", 10),
		row("a/engines=2", "engines=2", "2026-12-01T10:00:00Z", 1, "max_rate", "req/s", 19),
	}}
	b, err := Build(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	md := b.markdown()
	for _, hdr := range []string{"| scaling_efficiency (x) |", "| max_rate (req/s) |"} {
		if strings.Count(md, hdr) != 1 {
			t.Errorf("want one table headed %q in\n%s", hdr, md)
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.Contains(line, "engines=") && strings.Contains(line, "scaling_efficiency") {
			t.Errorf("a pool size's row under the efficiency: %s", line)
		}
	}
	tables := strings.Split(md, "Primary metric: ")
	if len(tables) != 3 || !strings.Contains(tables[2], "engines=1") || strings.Contains(tables[1], "engines=1") {
		t.Errorf("want the run's table, then the pool sizes' table:\n%s", md)
	}
}

// TestDuplicateIsTheLaterRun: of two runs with one seed and
// configuration, the one that ran later is flagged, whatever their ids.
func TestDuplicateIsTheLaterRun(t *testing.T) {
	c := &Collection{Rows: []Row{
		row("a-late", "", "2026-12-02T10:00:00Z", 7, "scaling_efficiency", "x", 0.8),
		row("z-early", "", "2026-12-01T10:00:00Z", 7, "scaling_efficiency", "x", 0.9),
	}}
	b, err := Build(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := b.Entries[0]
	if len(e.Duplicates) != 1 || !strings.HasPrefix(e.Duplicates[0], "a-late ") || e.RunIDs[0] != "z-early" {
		t.Errorf("duplicates %v, kept %v: want a-late flagged as the duplicate of z-early", e.Duplicates, e.RunIDs)
	}
}
