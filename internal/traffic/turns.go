package traffic

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
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
// report sections of a Q with sessions are built from it (TurnSection).
func TurnStats(recs []record.Request) []TurnStat {
	type acc struct {
		n          int
		in         float64
		ttft, gaps []float64
	}
	var by []acc
	for i := range recs {
		r := &recs[i]
		if r.Turn <= 0 || !r.OK {
			continue
		}
		for len(by) < r.Turn {
			by = append(by, acc{})
		}
		a := &by[r.Turn-1]
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
	out := make([]TurnStat, 0, len(by))
	for i, a := range by {
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

// TurnSection is the summary.md and report section of TurnStats: one row
// per turn index. Its body says so when recs hold no sessions.
func TurnSection(recs []record.Request) workload.Section {
	stats := TurnStats(recs)
	var b strings.Builder
	if len(stats) == 0 {
		b.WriteString("no multi-turn sessions in this run\n")
		return workload.Section{Title: "Sessions by turn", Body: b.String()}
	}
	b.WriteString("| turn | requests | mean input tokens | TTFT p50 ms | TTFT p99 ms | ITL p50 ms | ITL p99 ms |\n|---|---|---|---|---|---|---|\n")
	for _, s := range stats {
		fmt.Fprintf(&b, "| %d | %d | %.0f | %.1f | %.1f | %.2f | %.2f |\n", s.Turn, s.Count, s.Input, s.TTFT.P50, s.TTFT.P99, s.ITL.P50, s.ITL.P99)
	}
	return workload.Section{Title: "Sessions by turn", Body: b.String()}
}
