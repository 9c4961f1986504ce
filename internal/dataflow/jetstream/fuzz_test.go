package jetstream

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/sagebench/sagebench/internal/dataflow"
)

// FuzzJoinRequest feeds arbitrary join requests (they come from the
// network) to the coordinator's admission check: it must never panic, and
// it admits only a worker with a name of 1 to maxWorkerName printable
// bytes, of the same version, having every operator.
func FuzzJoinRequest(f *testing.F) {
	f.Add([]byte(`{"worker":"w","version":"v1","operators":["a","b"]}`))
	f.Add([]byte(`{"worker":"w","version":"v2","operators":["a"],"graph":"g"}`))
	f.Add([]byte(`{"operators":null}`))
	e := &Engine{cfg: Config{Run: "r", Version: "v1"}, graph: dataflow.Graph{Name: "g", Stages: []dataflow.StageConfig{{Name: "s", Operator: "a"}, {Name: "t", Operator: "b"}}}}
	f.Fuzz(func(t *testing.T, b []byte) {
		var req joinRequest
		if json.Unmarshal(b, &req) != nil {
			return
		}
		why := e.refusal(req)
		named := len(req.Worker) >= 1 && len(req.Worker) <= maxWorkerName && printable(req.Worker)
		ok := named && req.Version == "v1" && (req.Graph == "" || req.Graph == "g") &&
			strings.Contains(","+strings.Join(req.Operators, ",")+",", ",a,") &&
			strings.Contains(","+strings.Join(req.Operators, ",")+",", ",b,")
		if (why == "") != ok {
			t.Fatalf("refusal(%+v) = %q, want admitted=%v", req, why, ok)
		}
	})
}

// FuzzHeaders: the credit header and stream names come from the server;
// parsing them never panics and a valid credit round-trips.
func FuzzHeaders(f *testing.F) {
	f.Add("1099511627776", "SAGEBENCH_abc_S0")
	f.Add("-1", "SAGEBENCH__")
	f.Fuzz(func(t *testing.T, credit, stream string) {
		h := nats.Header{}
		h.Set(hdrCredit, credit)
		_ = parseCredit(h)
		if run, ok := runOfStream(stream); ok && (run == "" || !strings.HasPrefix(stream, StreamPrefix+run+"_")) {
			t.Fatalf("runOfStream(%q) = %q", stream, run)
		}
	})
}
