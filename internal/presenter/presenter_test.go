package presenter

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/aggregate"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// TestTableCells: a metric cell prints its value, its bracket, "never"
// or "–" by its state — never a number for a state.
func TestTableCells(t *testing.T) {
	ms := result.Def{Name: "p99", Unit: result.Ms, Direction: result.Lower}
	tbl := result.Table{Columns: []string{"policy", "p99"}}
	tbl.AddRow(result.Text("fifo"), result.Of(ms.Measure(2208, 50, "")))
	tbl.AddRow(result.Text("priority"), result.Of(ms.Within(1200, math.Inf(1), 50, "3 failed")))
	tbl.AddRow(result.Text("slo_aware"), result.Of(ms.Never("never back")))
	tbl.AddRow(result.Text("fair_share"), result.Of(ms.NotMeasurable("no first token")))
	var b bytes.Buffer
	WriteTable(&b, tbl, true)
	want := "| policy | p99 |\n|---|---|\n| fifo | 2,208 ms |\n| priority | ≥ 1,200 ms |\n| slo_aware | never |\n| fair_share | – |\n\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestAggregateAnswer: the aggregate leads with the primary's estimate
// over the valid repetitions and what it left out.
func TestAggregateAnswer(t *testing.T) {
	rec := result.Def{Name: "recovery_s", Unit: result.Seconds, Direction: result.Lower}
	e := aggregate.Of([]aggregate.Sample{{Metric: rec.Measure(4, 1, ""), Valid: true}, {Metric: rec.Never("never"), Valid: true},
		{Metric: rec.Measure(30, 1, ""), Valid: false}}, 0.95)
	a := aggregate.Aggregate{Workload: "Q5", Name: "HeteroResilience", Repetitions: 3, Valid: 2, Primary: "recovery_s",
		Confidence: 0.95, Metrics: []aggregate.Estimate{e}}
	got := AggregateAnswer(a)
	// One repetition measured 4 s, one never recovered: mixed states are
	// a bound, not a mean of the measured one.
	if !strings.Contains(got, "recovery_s ≥ 4.00 s") {
		t.Errorf("answer %q", got)
	}
	var b bytes.Buffer
	Aggregate(&b, a, false)
	if !strings.HasPrefix(b.String(), "answer: "+got) || !strings.Contains(b.String(), "never in 1; 4.00 s in 1 of 2") {
		t.Errorf("aggregate:\n%s", b.String())
	}
}

// TestMarkdownLeavesTheTableAlone: writing a table as Markdown escapes |
// in what it writes, not in the result's own columns, so the terminal
// table written after summary.md shows them as they are.
func TestMarkdownLeavesTheTableAlone(t *testing.T) {
	tbl := result.Table{Columns: []string{"a|b", "n"}}
	tbl.AddRow(result.Text("x|y"), result.Text("1"))
	var md, text bytes.Buffer
	WriteTable(&md, tbl, true)
	WriteTable(&text, tbl, false)
	if !strings.Contains(md.String(), `a\|b`) || !strings.Contains(md.String(), `x\|y`) {
		t.Errorf("markdown did not escape |:\n%s", md.String())
	}
	if strings.Contains(text.String(), `\|`) || tbl.Columns[0] != "a|b" {
		t.Errorf("the table was changed by writing it as markdown: columns %q, text:\n%s", tbl.Columns, text.String())
	}
}

// TestInvalidRunSaysSoBeforeItsAnswer: the terminal table of an invalid
// run leads with "valid: NO", before the answer, and says it once; a
// valid run keeps its verdict with the schedule.
func TestInvalidRunSaysSoBeforeItsAnswer(t *testing.T) {
	res := result.New("priority cut the critical p99", result.Def{Name: "x", Unit: result.Ms, Direction: result.Lower}.Measure(1, 1, ""))
	for _, tc := range []struct {
		name  string
		valid bool
		first string
	}{{"invalid", false, "valid: NO"}, {"valid", true, "answer:"}} {
		run := &record.Run{Workload: "Q2", RunID: "r", Valid: tc.valid, Complete: true, Result: &res}
		if !tc.valid {
			run.InvalidReasons = []string{"schedule lag p99 52 ms is above 5 ms"}
		}
		var b bytes.Buffer
		EndTable(&b, Run{Record: run})
		out := b.String()
		iv, ia := strings.Index(out, "valid: "), strings.Index(out, "answer:")
		if iv < 0 || ia < 0 || strings.Count(out, "valid: ") != 1 || (tc.first == "valid: NO") != (iv < ia) {
			t.Errorf("%s: verdict at %d, answer at %d, %d verdicts:\n%s", tc.name, iv, ia, strings.Count(out, "valid: "), out)
		}
	}
}

// TestRetriesAreShown: a run whose client retried prints what the policy
// did (the load it added, the goodput it bought); a run without retries
// prints no line.
func TestRetriesAreShown(t *testing.T) {
	res := result.New("ok", result.Def{Name: "x", Unit: result.Ms, Direction: result.Lower}.Measure(1, 1, ""))
	for _, tc := range []struct {
		name  string
		retry *record.RetrySummary
		want  string
	}{
		{"retried", &record.RetrySummary{Requests: 20, Attempts: 30, Amplification: 1.5, Retried: 10, Goodput: 4, GoodputWithoutRetries: 2},
			"retries: 30 attempts for 20 requests (amplification 1.50×, 10 retried, 0 transport replays); goodput 4.00 req/s, 2.00 without retries"},
		{"sent once", nil, ""},
	} {
		run := &record.Run{Workload: "Q8", RunID: "r", Valid: true, Complete: true, Result: &res, Summary: record.Summary{Retry: tc.retry}}
		var b bytes.Buffer
		EndTable(&b, Run{Record: run})
		if got := strings.Contains(b.String(), "retries:"); got != (tc.want != "") || !strings.Contains(b.String(), tc.want) {
			t.Errorf("%s:\n%s\nwant a line with %q", tc.name, b.String(), tc.want)
		}
	}
}
