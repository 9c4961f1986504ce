package presenter

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/summary"
)

// failingRun is a run of 100 chat requests of which failed failed; the
// successes' E2E p50 is 50 ms and p99 90 ms, TTFT p99 30 ms.
func failingRun(failed int) Run {
	lat := func(p50, p99 float64) record.Latency {
		return record.Latency{Count: int64(100 - failed), Mean: p50, P50: p50, P90: p99, P95: p99, P99: p99, P999: p99 + 5, Max: p99 + 5}
	}
	g := record.Group{Labels: map[string]string{summary.LabelType: "llm"}, Count: 100, Errors: failed, E2E: lat(50, 90), TTFT: lat(10, 30)}
	res := result.New("ok", result.Def{Name: "x", Unit: result.Ms, Direction: result.Lower}.Measure(1, 1, ""))
	run := &record.Run{Workload: "Q2", RunID: "r", Valid: true, Complete: true, Result: &res,
		Summary: record.Summary{Requests: 100, Failed: failed, E2E: g.E2E, Groups: []record.Group{g}}}
	return Run{Record: run}
}

// TestTablesCountFailures: the phase table and bench.txt give a p99 that
// counts a failed request as +∞ — "+∞" and no p99-ms value when failures
// reach its rank, never the successes' 90 ms (a bracket is left out of
// bench.txt too).
func TestTablesCountFailures(t *testing.T) {
	for _, tc := range []struct {
		name            string
		failed          int
		p99, ttft       string // the phase table's cells
		benchP99, bench bool   // p99-ms and ttft-p99-ms in bench.txt
	}{
		{"no failure", 0, "| 90.0 |", "| 30.0 |", true, true},
		{"failures at the p99's rank", 2, "| +∞ |", "| +∞ |", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := failingRun(tc.failed)
			cols, rows := r.phaseRows()
			var b bytes.Buffer
			WriteTable(&b, textTable(cols, rows), true)
			row := strings.Split(b.String(), "\n")[2]
			if p99, ttft := rows[0][5], rows[0][6]; "| "+p99+" |" != tc.p99 || "| "+ttft+" |" != tc.ttft {
				t.Errorf("p99 E2E %q, p99 TTFT %q; want %s %s (row %s)", p99, ttft, tc.p99, tc.ttft, row)
			}
			if all := rows[len(rows)-1][5]; "| "+all+" |" != tc.p99 {
				t.Errorf("the totals' p99 %q; want %s", all, tc.p99)
			}
			has := map[string]bool{}
			for _, v := range benchValues(r.Record.Summary.Groups[0], 1) {
				has[v.Unit] = true
				if v.Unit == "p99-ms" && v.Value != 90 {
					t.Errorf("p99-ms %v; want 90", v.Value)
				}
			}
			// two failures move the p50's rank (50 of 100, 49 of the 98
			// successes): only a bracket, left out too
			if has["p99-ms"] != tc.benchP99 || has["ttft-p99-ms"] != tc.bench || has["p50-ms"] != (tc.failed == 0) {
				t.Errorf("bench units %v; want p99-ms %v, ttft-p99-ms %v, p50-ms %v", has, tc.benchP99, tc.bench, tc.failed == 0)
			}
		})
	}
}

func textTable(cols []string, rows [][]string) result.Table {
	t := result.Table{Columns: cols}
	for _, r := range rows {
		var cells []result.Cell
		for _, c := range r {
			cells = append(cells, result.Text(c))
		}
		t.AddRow(cells...)
	}
	return t
}

// TestFloorCountsFailures: the floor's p99 error is +∞ when the failed
// requests reach its rank, exact when they leave it where it was, and a
// bracket up to the max when they move it among the successes.
func TestFloorCountsFailures(t *testing.T) {
	for _, tc := range []struct {
		name          string
		count, failed int
		want          string
		exact         bool
	}{
		{"none failed", 1000, 0, "0.200", true},
		{"one of 200 stays where it was", 199, 1, "0.200", true},
		{"five of 1000 move it", 995, 5, "0.200–0.900", false},
		{"two of 100 reach it", 98, 2, "+∞", false},
		{"all failed", 0, 3, "+∞", false},
		{"nothing", 0, 0, "-", false},
	} {
		got, exact := floorTail(0.2, 0.9, 0.99, tc.count, tc.failed)
		if got != tc.want || exact != tc.exact {
			t.Errorf("%s: %q exact %v; want %q %v", tc.name, got, exact, tc.want, tc.exact)
		}
	}
}

// TestFloorRowsCountFailures: the floor table's TTFT and E2E rows count
// the failed requests +∞ (p99 "+∞" when they reach its rank, the median
// % left out when the median moved), the ITL and lateness rows do not.
func TestFloorRowsCountFailures(t *testing.T) {
	es := record.ErrorStats{Count: 98, Median: 0.1, MedianPct: 0.5, P99: 0.2, Max: 0.9}
	f := &record.Floor{TTFT: es, ITL: es, E2E: es, Failed: 2}
	rows := FloorRows(f, "late")
	if len(rows) != 3 {
		t.Fatalf("rows %q; want TTFT, ITL, E2E (no lateness measured)", rows)
	}
	for _, tc := range []struct {
		row  []string
		want []string
	}{
		{rows[0], []string{"TTFT", "98", "2", "0.100–0.900", "-", "+∞", "0.900"}},
		{rows[1], []string{"ITL", "98", "0", "0.100", "0.50", "0.200", "0.900"}},
		{rows[2], []string{"E2E", "98", "2", "0.100–0.900", "-", "+∞", "0.900"}},
	} {
		if strings.Join(tc.row, "|") != strings.Join(tc.want, "|") {
			t.Errorf("row %q; want %q", tc.row, tc.want)
		}
	}
}

// TestFloorP99: the floor is known only when failures against the exact
// server leave its p99's rank where the successes' was.
func TestFloorP99(t *testing.T) {
	ok := record.ErrorStats{Count: 100, P99: 0.3, Max: 0.9}
	tests := []struct {
		name   string
		f      record.Floor
		want   float64
		wantOK bool
	}{
		{"no failures", record.Floor{TTFT: ok, E2E: record.ErrorStats{Count: 100, P99: 0.4, Max: 1}}, 0.4, true},
		{"two failures reach the p99", record.Floor{TTFT: ok, E2E: ok, Failed: 2}, 0, false},
		{"one failure of 1,000 leaves the rank", record.Floor{TTFT: record.ErrorStats{Count: 999, P99: 0.3, Max: 0.9}, E2E: record.ErrorStats{Count: 999, P99: 0.3, Max: 0.9}, Failed: 1}, 0.3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, gotOK := FloorP99(&tc.f)
			if got != tc.want || gotOK != tc.wantOK {
				t.Errorf("FloorP99 = %v, %v; want %v, %v", got, gotOK, tc.want, tc.wantOK)
			}
		})
	}
}
