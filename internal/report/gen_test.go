package report

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/capture"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload/q3"
)

var update = flag.Bool("update", false, "rewrite testdata run directories and golden files")

// fakeRun describes a generated run directory.
type fakeRun struct {
	id, workload, backend string
	seed                  uint64
	n                     int     // requests
	slow                  float64 // latency scale
	valid                 bool
	broken                bool   // a damaged line in requests.jsonl, no metrics
	drill                 bool   // events.jsonl: a kill at 20 s, a restart at 40 s, one not performed
	tenant, target        string // the first tenant's name, the drill's target (default gold, llm-fast-0)
}

var start = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// writeFakeRun writes run.json, requests.jsonl and metrics.jsonl for f
// into dir: two tenants with different latencies over 60 s, 2% errors
// and a queue-depth gauge and request counter scraped every second.
func writeFakeRun(t *testing.T, dir string, f fakeRun) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(f.seed, 7))
	var lines []byte
	var e2e []float64
	for i := 0; i < f.n; i++ {
		tenant := []string{or(f.tenant, "gold"), "bronze"}[i%2]
		ms := (20 + rng.ExpFloat64()*30*float64(1+i%2)) * f.slow
		intended := int64(float64(i) / float64(f.n) * 60e9)
		q := record.Request{ID: fmt.Sprintf("r%d", i), Seq: i, Kind: "request", Type: "llm", Tenant: tenant,
			IntendedNS: intended, SentNS: intended + 1e5, EndNS: intended + int64(ms*1e6), E2EMs: ms, ServiceMs: ms - 0.1,
			LagMs: 0.1, Status: 200, OK: rng.Float64() > 0.02, SLOMet: ms < 100}
		if !q.OK {
			q.Status, q.ErrorClass = 503, "http_5xx"
		}
		b, _ := json.Marshal(q)
		lines = append(append(lines, b...), '\n')
		e2e = append(e2e, ms)
	}
	if f.broken {
		lines = append(lines, []byte("{\"id\": \"cut-off\n")...)
	}
	write(t, filepath.Join(dir, "requests.jsonl"), lines)
	write(t, filepath.Join(dir, "run.json"), runJSON(t, f, e2e))
	if !f.broken {
		write(t, filepath.Join(dir, capture.MetricsFile), metricsJSONL(f))
	}
	if f.drill {
		tg, _ := json.Marshal(or(f.target, "llm-fast-0"))
		write(t, filepath.Join(dir, EventsFile), []byte(`{"seq":0,"action":"kill","target":`+string(tg)+`,"intended_ns":20000000000,"actual_ns":20001000000,"outcome":"ok"}
{"seq":1,"action":"restart","target":`+string(tg)+`,"intended_ns":40000000000,"actual_ns":40002000000,"outcome":"ok"}
{"seq":2,"action":"pause","target":"llm-1","intended_ns":70000000000,"actual_ns":0,"outcome":"not_performed"}
`))
	}
}

func runJSON(t *testing.T, f fakeRun, e2e []float64) []byte {
	lat := func(scale float64) record.Latency {
		return record.Latency{Count: int64(len(e2e)), P50: 40 * scale, P99: 160 * scale, Max: 250 * scale, Mean: 50 * scale}
	}
	r := record.Run{RunID: f.id, Workload: f.workload, Name: "TenantIsolation", Entry: "tenants", Backend: f.backend,
		Seed: int64(f.seed), Complete: !f.broken, Valid: f.valid, RunConfig: json.RawMessage(`{"rate":10,"duration":"60s"}`),
		ConfigHash: "cafe01", Target: "embedded", LoadMode: "open-loop", StartedAt: start, EndedAt: start.Add(time.Minute),
		Environment: record.Environment{GoVersion: "go1.26", OS: "linux", Arch: "amd64", Cores: 2}}
	if !f.valid {
		r.InvalidReasons = []string{"delivered rate 61% of target (below 95%)"}
	}
	s := &r.Summary
	res := result.New("a made-up run's answer", result.Def{Name: "goodput", Unit: result.ReqPerS, Direction: result.Higher}.Measure(9.1/f.slow, f.n, ""))
	if f.tenant != "" { // hostile names reach the answer figure and its table too
		alone := result.Def{Name: "victim_ttft_p99_alone_ms", Unit: result.Ms, Direction: result.Lower}
		cont := result.Def{Name: "victim_ttft_p99_contended_ms", Unit: result.Ms, Direction: result.Lower}
		t := result.Table{Key: q3.TableIsolation, Title: "Isolation per policy", Note: f.tenant, Columns: []string{"policy", "alone", "contended", f.tenant}}
		t.AddRow(result.Text(f.tenant), result.Of(alone.Measure(20, 10, "")), result.Of(cont.Measure(90, 10, "")), result.Text(f.tenant))
		res.Tables = append(res.Tables, t)
		res.Answer = f.tenant
	}
	r.Result = &res
	s.Requests, s.Succeeded, s.Failed = f.n, f.n*98/100, f.n-f.n*98/100
	s.DurationSeconds, s.TargetRate, s.DeliveredRate = 60, 10, 10
	s.Throughput, s.Goodput, s.SLOAttainment, s.SuccessRate = float64(f.n)/60/f.slow, 9.1/f.slow, 0.91, 0.98
	s.E2E = lat(f.slow)
	for i, tenant := range []string{"gold", "bronze"} {
		s.Groups = append(s.Groups, record.Group{Labels: map[string]string{"tenant": tenant}, Count: f.n / 2, E2E: lat(f.slow * float64(1+i))})
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func metricsJSONL(f fakeRun) []byte {
	var out []byte
	for i := 0; i <= 60; i++ {
		l := capture.MetricsLine{At: start.Add(time.Duration(i) * time.Second), Target: "http://127.0.0.1:8080/metrics",
			Values: map[string]float64{"gateway_queue_depth": float64((i*7)%13) * f.slow, "gateway_requests_total": float64(i * 10)}}
		if i == 0 {
			l.Types = map[string]string{"gateway_queue_depth": "gauge", "gateway_requests_total": "counter"}
		}
		b, _ := json.Marshal(l)
		out = append(append(out, b...), '\n')
	}
	return out
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testdataRuns are the run directories under testdata/runs, also used by
// the CLI tests; go test -run TestTestdataRuns -update rewrites them.
var testdataRuns = []fakeRun{
	{id: "q3-sage-r0", workload: "Q3", backend: "sage", seed: 1, n: 240, slow: 1, valid: true},
	{id: "q3-ray-r0", workload: "Q3", backend: "ray", seed: 2, n: 240, slow: 1.6, valid: true},
	{id: "q3-broken", workload: "Q3", backend: "sage", seed: 3, n: 60, slow: 1, broken: true},
	{id: "q5-drill", workload: "Q5", backend: "sage", seed: 4, n: 120, slow: 1, valid: true, drill: true},
}

func TestTestdataRuns(t *testing.T) {
	for _, f := range testdataRuns {
		dir := filepath.Join("testdata", "runs", f.id)
		if *update {
			writeFakeRun(t, dir, f)
		}
		if _, err := os.Stat(filepath.Join(dir, "run.json")); err != nil {
			t.Fatalf("%v (run go test -run TestTestdataRuns -update)", err)
		}
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
