package workloadtest

import (
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/result"
)

// TestResultDiff: the recompute check fails on any difference in what
// the recomputed result defines, and ignores what the runner added.
func TestResultDiff(t *testing.T) {
	def := result.Def{Name: "x_ms", Unit: result.Ms, Direction: result.Lower}
	other := result.Def{Name: "y", Unit: result.Count, Direction: result.Lower}
	base := func() result.Result {
		r := result.New("answer", def.Measure(10, 20, ""), other.Measure(3, 20, ""))
		tb := result.Table{Key: "t", Columns: []string{"a"}}
		tb.AddRow(result.Text("1"))
		r.Tables = append(r.Tables, tb)
		return r
	}
	cases := []struct {
		name   string
		change func(*result.Result)
		want   string // "" agrees
	}{
		{"same", func(*result.Result) {}, ""},
		{"runner's additions ignored", func(r *result.Result) {
			r.Metrics = append(r.Metrics, result.Def{Name: "throughput", Unit: result.ReqPerS}.Measure(1, 1, ""))
			r.Tables = append(r.Tables, result.Table{Key: "turns"})
		}, ""},
		{"answer", func(r *result.Result) { r.Answer = "other" }, "answer"},
		{"primary value", func(r *result.Result) { r.Primary.Value = 10.5 }, "primary"},
		{"metric n", func(r *result.Result) { r.Metrics[len(r.Metrics)-1].N = 19 }, "metric y"},
		{"metric missing", func(r *result.Result) { r.Metrics = nil }, "not in run.json"},
		{"table cell", func(r *result.Result) { r.Tables[0].Rows[0][0] = result.Text("2") }, "table t"},
		{"table missing", func(r *result.Result) { r.Tables = nil }, "table t"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recorded := base()
			c.change(&recorded)
			got := ResultDiff(recorded, base())
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("diff %q; want one naming %q", got, c.want)
			}
		})
	}
}
