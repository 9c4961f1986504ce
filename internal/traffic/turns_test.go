package traffic_test

import (
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/traffic"
)

func TestTurnStats(t *testing.T) {
	ms := int64(1e6)
	recs := []record.Request{
		{ID: "a-t1", OK: true, Turn: 1, InputTokens: 100, FirstToken: 10 * ms, TTFTMs: 10, TokenNS: []int64{10 * ms, 12 * ms, 14 * ms}},
		{ID: "b-t1", OK: true, Turn: 1, InputTokens: 200, FirstToken: 30 * ms, TTFTMs: 30, TokenNS: []int64{30 * ms, 31 * ms}},
		{ID: "a-t2", OK: true, Turn: 2, InputTokens: 400, FirstToken: 50 * ms, TTFTMs: 50,
			TokenNS: []int64{50 * ms, 53 * ms, 900 * ms}, TokenNSDropped: 100}, // no gap across the cut
		{ID: "b-t2", OK: false, Turn: 2, InputTokens: 999},
		{ID: "plain", OK: true, TTFTMs: 1},
	}
	s := traffic.TurnStats(recs)
	if len(s) != 2 || s[0].Count != 2 || s[0].Input != 150 || s[0].TTFT.P50 != 30 || s[0].ITL.Max != 2 || s[0].ITL.Count != 3 {
		t.Errorf("turn 1: %+v", s[0])
	}
	if s[1].Count != 1 || s[1].Input != 400 || s[1].ITL.Count != 1 || s[1].ITL.Max != 3 {
		t.Errorf("turn 2: %+v", s[1])
	}
	tbl, ok := traffic.TurnTable(recs)
	if !ok || len(tbl.Rows) != 2 || tbl.Rows[1][2].Text != "400" || tbl.Rows[1][3].Metric.Value != 50 {
		t.Errorf("table %+v", tbl)
	}
	if err := (result.Result{Answer: "a", Primary: *tbl.Rows[0][3].Metric, Metrics: []result.Metric{*tbl.Rows[0][3].Metric}, Tables: []result.Table{tbl}}).Check(); err != nil {
		t.Error(err)
	}
	if _, ok := traffic.TurnTable(recs[4:]); ok {
		t.Error("a table without sessions")
	}
}
