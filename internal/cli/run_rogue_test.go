package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/sagebench/sagebench/internal/dataflow/jetstream"
	"github.com/sagebench/sagebench/internal/record"
)

// TestRunRogueForgesRecords is the attack of issue 35 against a run: a
// client holding the NATS server's credentials but not the join token
// subscribes to sagebench.>, reads each node's plan and publishes a
// forged record for every planned ID ahead of the node, with Nats-Msg-Id
// = the ID (and once more with a forged node header). None of them gets
// into requests.jsonl; the run is invalid (exit 5) with the rejected
// count in run.json.
func TestRunRogueForgesRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server and a worker process")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const user, pw = "ops", "outside-pw-0123456789"
	srv, err := jetstream.StartEmbedded(ctx, jetstream.ServerConfig{User: user, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	stack, stop := startServe(t, "serve", "--listen", "127.0.0.1:0")
	defer stop()
	dir := t.TempDir()
	tok := tokenFile(t, dir)
	t.Setenv(envNATSUser, user)
	t.Setenv(envNATSPassword, pw)
	_, werr := handWorker(t, srv.URL(), "w1", "--target", stack, "--join-token-file", tok)
	forged := startRogue(t, srv.URL(), user, pw)
	cfg := writeConfig(t, dir, "validity: {max_lag_p99_ms: 1000, min_delivered_ratio: 0.5}\n"+
		"q4: {scales: [1], probe: 500ms, max_probe: 500ms, service_multiple: 0, max_probes: 2, max_driver_lag: 60s, start_rate: 8}\n")
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, ctx, "run", "-e", "Q4", "--quick", "--nodes", "1", "--nats-url", srv.URL(),
		"--join-token-file", tok, "--target", stack, "-c", cfg, "--output-dir", out)
	if forged.Load() == 0 {
		t.Fatalf("the rogue forged nothing (exit %d)\nstderr: %s\nworker: %s", code, stderr, werr.String())
	}
	if code != ExitInvalidRun {
		t.Fatalf("exit %d, want %d (invalid)\nstderr: %s\nstdout: %s", code, ExitInvalidRun, stderr, stdout)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "q4", "q4-sage-0-*"))
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	run := readRun(t, dirs[0])
	for _, r := range readRequests(t, dirs[0]) {
		if r.Node != "w1" || r.E2EMs == 0.001 {
			t.Fatalf("a forged record got in: %+v", r)
		}
	}
	if run.Valid || run.Integrity == nil || run.Integrity.Rejected < int(forged.Load()) ||
		!strings.Contains(strings.Join(run.InvalidReasons, "; "), "integrity failure") {
		t.Errorf("valid %v, integrity %+v (forged %d), reasons %v", run.Valid, run.Integrity, forged.Load(), run.InvalidReasons)
	}
	t.Logf("rogue forged %d records; rejected %+v", forged.Load(), run.Integrity)
}

// startRogue connects with the server's credentials and forges, for
// every plan part it overhears, a record per planned ID, twice; it
// returns the count of forged messages stored by the stream.
func startRogue(t *testing.T, url, user, pw string) *atomic.Int64 {
	t.Helper()
	nc, err := nats.Connect(url, nats.UserInfo(user, pw))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := natsjs.New(nc)
	var forged atomic.Int64
	_, err = nc.Subscribe("sagebench.>", func(m *nats.Msg) {
		var req struct {
			Op      string `json:"op"`
			Subject string `json:"subject"`
			Plan    *struct {
				Requests []struct {
					ID string `json:"id"`
				} `json:"requests"`
			} `json:"plan"`
		}
		if json.Unmarshal(m.Data, &req) != nil || req.Op != "plan" || req.Plan == nil {
			return
		}
		for _, r := range req.Plan.Requests {
			b, _ := json.Marshal(record.Request{ID: r.ID, Kind: "request", Type: "llm", OK: true, E2EMs: 0.001, Node: "w1"})
			for _, hdr := range []nats.Header{{"Nats-Msg-Id": {r.ID}}, {"Sb-Node": {"w1"}, "Sb-Mac": {strings.Repeat("0", 64)}}} {
				fm := &nats.Msg{Subject: req.Subject, Data: b, Header: hdr}
				pctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				if _, err := js.PublishMsg(pctx, fm); err == nil {
					forged.Add(1)
				}
				cancel()
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return &forged
}
