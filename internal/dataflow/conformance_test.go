package dataflow_test

import (
	"testing"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
)

// TestLocalConformance runs the engine conformance suite on the
// in-process engine, plain and serialising.
func TestLocalConformance(t *testing.T) {
	for _, ser := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "serialize"}[ser]
		t.Run(name, func(t *testing.T) {
			dataflowtest.Run(t, dataflowtest.Harness{
				New: func(t testing.TB, reg *dataflow.Registry, obs dataflow.Observer) (dataflow.Engine, func() dataflow.Stats) {
					eng, err := dataflow.NewLocal(reg, dataflow.LocalOptions{Serialize: ser, Observer: obs})
					if err != nil {
						t.Fatal(err)
					}
					return eng, eng.Stats
				},
				Bound: func(g dataflow.Graph) int {
					n := 0
					for _, s := range g.Stages {
						n += g.QueueCapacity + g.Parallelism
						_ = s
					}
					return n
				},
			})
		})
	}
}
