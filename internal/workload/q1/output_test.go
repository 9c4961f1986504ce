package q1

import (
	"testing"

	"github.com/sagebench/sagebench/internal/target"
)

// TestOutputControl: the generate stage asks a URL target for exactly
// max_tokens (ignore_eos, min_tokens), the embedded one for nothing more,
// and a param the graph sets itself wins.
func TestOutputControl(t *testing.T) {
	c := Default(true)
	g := outputControl(c.deployGraph(2), target.OutputControl{IgnoreEOS: true, MinTokens: true})
	for _, s := range g.Stages {
		if s.Operator == "generate" && (s.Params["ignore_eos"] != "true" || s.Params["min_tokens"] != "32") {
			t.Errorf("URL target: generate params %v", s.Params)
		}
		if s.Operator != "generate" && s.Params["ignore_eos"] != "" {
			t.Errorf("stage %s got %v", s.Name, s.Params)
		}
	}
	for _, s := range outputControl(c.deployGraph(2), target.OutputControl{}).Stages {
		if _, ok := s.Params["ignore_eos"]; ok {
			t.Errorf("embedded target: %v", s.Params)
		}
	}
	c.Graph.Stages[2].Params = map[string]string{"min_tokens": "5"}
	for _, s := range outputControl(c.deployGraph(2), target.OutputControl{IgnoreEOS: true, MinTokens: true}).Stages {
		if s.Operator == "generate" && s.Params["min_tokens"] != "5" {
			t.Errorf("the graph's own min_tokens lost: %v", s.Params)
		}
	}
}
