package traffic

import (
	"fmt"
	"slices"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// TurnStat summarises the successful requests of one turn index of the
// sessions in a set of records: how many, their mean intended input
// tokens (the conversation so far grows it), TTFT (from the intended
// send) and ITL (gaps between streamed tokens), in ms.
type TurnStat struct {
	Turn  int
	Count int
	Input float64
	TTFT  record.Latency
	ITL   record.Latency
}

// TurnStats computes TurnStat per turn index (1, 2, …) over the session
// records of recs (Turn > 0); nil when there are none. The summary and
// report tables of a Q with sessions are built from it (TurnTable).
func TurnStats(recs []record.Request) []TurnStat {
	var t Turns
	for i := range recs {
		t.Add(&recs[i])
	}
	return t.Stats()
}

// Turns gathers what TurnStats needs of session records one at a time,
// keeping their numbers rather than the records (a run's sink feeds it
// every record). Past MaxTurnRecords session records it keeps no more.
type Turns struct {
	by   []turnAcc
	kept int
}

// MaxTurnRecords bounds the session records a Turns keeps.
const MaxTurnRecords = 1 << 20

type turnAcc struct {
	n          int
	in         float64
	ttft, gaps []float64
}

// Add takes r when it is a session turn (Turn > 0) that succeeded.
func (t *Turns) Add(r *record.Request) {
	if r.Turn <= 0 || t.kept >= MaxTurnRecords {
		return
	}
	t.kept++
	if !r.OK {
		return
	}
	for len(t.by) < r.Turn {
		t.by = append(t.by, turnAcc{})
	}
	a := &t.by[r.Turn-1]
	a.n++
	a.in += float64(r.InputTokens)
	if r.FirstToken > 0 {
		a.ttft = append(a.ttft, r.TTFTMs)
	}
	last := len(r.TokenNS)
	if r.TokenNSDropped > 0 { // the kept first ones, then the last: no gap across the cut
		last--
	}
	for k := 1; k < last; k++ {
		a.gaps = append(a.gaps, float64(r.TokenNS[k]-r.TokenNS[k-1])/1e6)
	}
}

// Stats is TurnStats of the records added.
func (t *Turns) Stats() []TurnStat {
	out := make([]TurnStat, 0, len(t.by))
	for i, a := range t.by {
		s := TurnStat{Turn: i + 1, Count: a.n, TTFT: latency(a.ttft), ITL: latency(a.gaps)}
		if a.n > 0 {
			s.Input = a.in / float64(a.n)
		}
		out = append(out, s)
	}
	return out
}

// latency summarises ms values exactly (sorted; sessions are few).
func latency(ms []float64) record.Latency {
	if len(ms) == 0 {
		return record.Latency{}
	}
	slices.Sort(ms)
	at := func(q float64) float64 { return ms[min(int(q*float64(len(ms))), len(ms)-1)] }
	sum := 0.0
	for _, v := range ms {
		sum += v
	}
	return record.Latency{Count: int64(len(ms)), Mean: sum / float64(len(ms)), P50: at(0.5), P90: at(0.9), P95: at(0.95),
		P99: at(0.99), P999: at(0.999), Max: ms[len(ms)-1]}
}

// TurnTable is the table of TurnStats for a Q's result: one row per turn
// index, latencies as metrics; ok is false when recs hold no sessions.
func TurnTable(recs []record.Request) (t result.Table, ok bool) {
	return turnTable(TurnStats(recs))
}

// Table is TurnTable of the records added.
func (t *Turns) Table() (result.Table, bool) { return turnTable(t.Stats()) }

func turnTable(stats []TurnStat) (t result.Table, ok bool) {
	if len(stats) == 0 {
		return t, false
	}
	t = result.Table{Title: "Sessions by turn", Note: "successful requests of each turn index; TTFT from the intended send, ITL between streamed tokens",
		Columns: []string{"turn", "requests", "mean input tokens", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99"}}
	ms := func(name string, v float64, n int64) result.Cell {
		return result.Of(result.Def{Name: name, Unit: result.Ms, Direction: result.Lower}.Measure(v, int(n), "no sample"))
	}
	for _, s := range stats {
		pre := fmt.Sprintf("turn_%d_", s.Turn)
		t.AddRow(result.Textf("%d", s.Turn), result.Textf("%d", s.Count), result.Textf("%.0f", s.Input),
			ms(pre+"ttft_p50_ms", s.TTFT.P50, s.TTFT.Count), ms(pre+"ttft_p99_ms", s.TTFT.P99, s.TTFT.Count),
			ms(pre+"itl_p50_ms", s.ITL.P50, s.ITL.Count), ms(pre+"itl_p99_ms", s.ITL.P99, s.ITL.Count))
	}
	return t, true
}
