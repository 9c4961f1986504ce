package jetstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/dataflow"
	"github.com/sagebench/sagebench/internal/dataflow/dataflowtest"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
)

// startServer starts an embedded server for one test.
func startServer(t testing.TB) *jetstream.Server {
	t.Helper()
	srv, err := jetstream.StartEmbedded(context.Background(), jetstream.ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// newEngine returns an engine on srv; cfg's connection fields are filled.
func newEngine(t testing.TB, srv *jetstream.Server, cfg jetstream.Config) *jetstream.Engine {
	t.Helper()
	cfg.Conn.URL = srv.URL()
	eng, err := jetstream.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return eng
}

func TestJetStreamConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  []byte
	}{
		{"unsealed", nil},
		{"sealed with a run key", jetstream.RunKey("0123456789abcdef0123456789abcdef", "conformance")},
	} {
		t.Run(tc.name, func(t *testing.T) { conformance(t, tc.key) })
	}
}

func conformance(t *testing.T, key []byte) {
	srv := startServer(t)
	dataflowtest.Run(t, dataflowtest.Harness{
		New: func(t testing.TB, reg *dataflow.Registry, obs dataflow.Observer) (dataflow.Engine, func() dataflow.Stats) {
			eng := newEngine(t, srv, jetstream.Config{Registry: reg, Observer: obs, AckWait: 5 * time.Second, Key: key})
			return eng, func() dataflow.Stats { return eng.Stats().Stats }
		},
		Bound: func(g dataflow.Graph) int {
			// Every stream holds at most its capacity, in-service and
			// unacked records included.
			return len(g.Stages) * g.QueueCapacity
		},
	})
}
