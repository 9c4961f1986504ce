package q1

import (
	"math"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/rag"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestFillCallTPOT: a generate stage's TPOT is the mean gap between the
// tokens it timed, not the stream's span divided by a usage count that
// includes tokens never streamed.
func TestFillCallTPOT(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c := rag.Call{Sent: at(0), FirstByte: at(40), FirstToken: at(50), End: at(400),
		Tokens: []time.Time{at(50), at(60), at(70), at(80)}, CompletionTokens: 60}
	var rec record.Request
	fillCall(&rec, &workload.Env{Start: t0}, t0, c)
	if math.Abs(rec.TPOTMs-10) > 1e-9 || math.Abs(rec.TTFTMs-50) > 1e-9 {
		t.Errorf("tpot %v ms, ttft %v ms; want 10 and 50", rec.TPOTMs, rec.TTFTMs)
	}
}
