package dataflow_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
)

func TestGraphValidate(t *testing.T) {
	ok := dataflow.StageConfig{Name: "embed", Operator: "embed"}
	for _, tc := range []struct {
		name string
		g    dataflow.Graph
		want string // substring of the error; empty means valid
	}{
		{"minimal", dataflow.Graph{Stages: []dataflow.StageConfig{ok}}, ""},
		{"no-stages", dataflow.Graph{Name: "q1"}, "at least one stage"},
		{"negative-graph-parallelism", dataflow.Graph{Parallelism: -1, Stages: []dataflow.StageConfig{ok}}, "parallelism -1"},
		{"negative-graph-queue", dataflow.Graph{QueueCapacity: -1, Stages: []dataflow.StageConfig{ok}}, "queue_capacity -1"},
		{"unnamed-stage", dataflow.Graph{Stages: []dataflow.StageConfig{{Operator: "x"}}}, "stages[0]: name: required"},
		{"no-operator", dataflow.Graph{Stages: []dataflow.StageConfig{{Name: "a"}}}, `stage "a": operator: required`},
		{"duplicate", dataflow.Graph{Stages: []dataflow.StageConfig{ok, ok}}, `stages[1]: name "embed" already used by stages[0]`},
		{"negative-parallelism", dataflow.Graph{Stages: []dataflow.StageConfig{{Name: "a", Operator: "x", Parallelism: -2}}}, "parallelism -2"},
		{"negative-queue", dataflow.Graph{Stages: []dataflow.StageConfig{{Name: "a", Operator: "x", QueueCapacity: -2}}}, "queue_capacity -2"},
		{"negative-timeout", dataflow.Graph{Stages: []dataflow.StageConfig{{Name: "a", Operator: "x", Timeout: -time.Second}}}, "timeout -1s"},
		// Sizes a Deploy cannot allocate (a crash, not an error) are rejected.
		{"huge-graph-queue", dataflow.Graph{QueueCapacity: 1 << 40, Stages: []dataflow.StageConfig{ok}}, "queue_capacity 1099511627776: must be ≥ 0 (0 means 256) and ≤ 1048576"},
		{"huge-queue", dataflow.Graph{Stages: []dataflow.StageConfig{{Name: "a", Operator: "x", QueueCapacity: dataflow.MaxQueueCapacity + 1}}}, "queue_capacity 1048577: must be ≥ 0 and ≤ 1048576"},
		{"huge-graph-parallelism", dataflow.Graph{Parallelism: 1 << 40, Stages: []dataflow.StageConfig{ok}}, "parallelism 1099511627776: must be ≥ 0 (0 means 1) and ≤ 16384"},
		{"huge-parallelism", dataflow.Graph{Stages: []dataflow.StageConfig{{Name: "a", Operator: "x", Parallelism: dataflow.MaxParallelism + 1}}}, "parallelism 16385: must be ≥ 0 and ≤ 16384"},
		{"largest", dataflow.Graph{Parallelism: dataflow.MaxParallelism, QueueCapacity: dataflow.MaxQueueCapacity, Stages: []dataflow.StageConfig{ok}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.g.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestParseGraph(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want string // error substring; empty means it parses
	}{
		{"q1", `
name: q1
parallelism: 2
stages:
  - {name: embed, operator: embed, timeout: 5s}
  - {name: retrieve, operator: retrieve, queue_capacity: 32}
  - name: generate
    operator: generate
    parallelism: 8
    timeout: 1m
    params: {model: llama}
`, ""},
		{"unknown-key", "stages:\n  - {name: a, operator: b, parallelizm: 2}\n", "parallelizm"},
		{"bad-duration", "stages:\n  - {name: a, operator: b, timeout: soon}\n", "decoding graph"},
		{"invalid", "stages: []\n", "at least one stage"},
		{"panics-the-decoder", "stages:\n !0\n    0: 0\n", "decoding graph"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := dataflow.ParseGraph([]byte(tc.yaml))
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("ParseGraph: %v, want error containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gen := g.Stages[2]
			if g.Parallelism != 2 || g.Stages[0].Timeout != 5*time.Second || g.Stages[1].QueueCapacity != 32 ||
				gen.Parallelism != 8 || gen.Timeout != time.Minute || gen.Params["model"] != "llama" {
				t.Fatalf("parsed %+v", g)
			}
		})
	}
}

func FuzzParseGraph(f *testing.F) {
	f.Add([]byte("stages:\n  - {name: a, operator: b, timeout: 1s}\n"))
	f.Add([]byte("name: x\nparallelism: 3\nstages: [{name: a, operator: b}, {name: c, operator: d}]\n"))
	f.Add([]byte("stages: {a: 1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := dataflow.ParseGraph(data)
		if err == nil {
			if verr := g.Validate(); verr != nil {
				t.Fatalf("ParseGraph accepted a graph Validate rejects: %v", verr)
			}
		}
	})
}

func TestRegistry(t *testing.T) {
	reg := dataflow.NewRegistry()
	if err := reg.RegisterFunc("embed", noop); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"duplicate", reg.RegisterFunc("embed", noop), "already registered"},
		{"empty-name", reg.RegisterFunc(" ", noop), "empty name"},
		{"nil-factory", reg.Register("x", nil), "nil factory"},
		{"nil-func", reg.RegisterFunc("y", nil), "nil function"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", tc.err, tc.want)
			}
		})
	}
	if got := strings.Join(reg.Names(), ","); got != "embed" {
		t.Fatalf("Names() = %s", got)
	}
}

func TestFactoryFailureFailsDeploy(t *testing.T) {
	reg := dataflow.NewRegistry()
	_ = reg.Register("generate", func(s dataflow.StageConfig) (dataflow.Operator, error) {
		if s.Params["model"] == "" {
			return nil, errors.New("params.model: required")
		}
		return dataflow.OperatorFunc(noop), nil
	})
	eng, _ := dataflow.NewLocal(reg, dataflow.LocalOptions{})
	err := eng.Deploy(context.Background(), dataflow.Graph{Stages: []dataflow.StageConfig{{Name: "gen", Operator: "generate"}}})
	if err == nil || !strings.Contains(err.Error(), `stage "gen"`) || !strings.Contains(err.Error(), "params.model") {
		t.Fatalf("Deploy: %v, want the factory's error naming the stage", err)
	}
}

func TestParseGraphParamsAreStrings(t *testing.T) {
	g, err := dataflow.ParseGraph([]byte("stages:\n  - {name: r, operator: retrieve, params: {k: 5, index: docs}}\n"))
	if err != nil {
		t.Fatalf("ParseGraph: %v", err)
	}
	if p := g.Stages[0].Params; p["k"] != "5" || p["index"] != "docs" {
		t.Fatalf("params %v", p)
	}
}
