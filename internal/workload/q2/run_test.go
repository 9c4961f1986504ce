package q2_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/run"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/target/targettest"
	"github.com/sagebench/sagebench/internal/workload"
	"github.com/sagebench/sagebench/internal/workload/q2"
)

// tinyResolved resolves Q2 with n requests per policy against url.
func tinyResolved(t *testing.T, url, out string, n int, policies ...string) runconfig.Resolved {
	t.Helper()
	s := runconfig.DefaultShared()
	s.OutputDir, s.Target.URL, s.Quick = out, url, true
	s.Validity = summary.Validity{MinDeliveredRatio: 0.01, MaxLagP99Ms: 60_000} // checks records, not the machine's timing
	s.Drain = time.Second
	yaml := "q2:\n  schedule: {process: poisson, rate: 50, count: " + strconv.Itoa(n) + "}\n  policies: [" + strings.Join(policies, ", ") + "]\n"
	f, err := runconfig.ParseConfig("t.yaml", []byte(yaml), &s, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := runconfig.Resolve(q2.Spec(), s, f, workload.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestQ2AgainstFakeTarget(t *testing.T) {
	cases := []struct {
		name       string
		mode       string
		noAdmin    bool
		timeout    time.Duration
		wantPhases []string
		wantClass  string // error class(es) of every request, "|"-separated; "" = all ok
		wantNote   string
	}{
		{name: "ok", mode: targettest.OK, wantPhases: []string{"fifo", "slo_aware"}},
		{name: "no admin api", mode: targettest.OK, noAdmin: true, wantPhases: []string{"target"}, wantNote: "cannot switch policy"},
		{name: "garbage", mode: targettest.Garbage, wantPhases: []string{"fifo", "slo_aware"}, wantClass: "malformed|truncated"},
		{name: "500", mode: targettest.Fail, wantPhases: []string{"fifo", "slo_aware"}, wantClass: "http_5xx"},
		{name: "hang", mode: targettest.Hang, timeout: 300 * time.Millisecond, wantPhases: []string{"fifo", "slo_aware"}, wantClass: "timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := targettest.NewServer(c.mode)
			srv.NoAdmin = c.noAdmin
			defer srv.Close()
			r := tinyResolved(t, srv.URL, t.TempDir(), 8, "fifo", "slo_aware")
			r.Shared.Target.Timeout = c.timeout
			start := time.Now()
			res, err := (&run.Runner{Out: &strings.Builder{}, Env: record.CollectEnvironment()}).Run(context.Background(), r)
			if err != nil || len(res) != 1 {
				t.Fatalf("Run: %v (%d results)", err, len(res))
			}
			if el := time.Since(start); el > 20*time.Second {
				t.Errorf("run took %v: a broken target must not hold the run", el)
			}
			run, reqs := res[0].Run, readRequests(t, res[0].Dir)
			phases := map[string]bool{}
			for _, q := range reqs {
				phases[q.Phase] = true
				classOK := q.ErrorClass != "" && strings.Contains("|"+c.wantClass+"|", "|"+q.ErrorClass+"|")
				if c.wantClass == "" && !q.OK || c.wantClass != "" && (q.OK || !classOK) {
					t.Errorf("request %s: ok=%v class=%q error=%q", q.ID, q.OK, q.ErrorClass, q.Error)
				}
			}
			if len(reqs) != 8*len(c.wantPhases) || len(phases) != len(c.wantPhases) || !run.Complete {
				t.Errorf("%d requests in phases %v (want %v), complete %v", len(reqs), phases, c.wantPhases, run.Complete)
			}
			if c.wantNote != "" && !strings.Contains(strings.Join(run.Notes, " "), c.wantNote) {
				t.Errorf("notes %v, want %q", run.Notes, c.wantNote)
			}
		})
	}
}

func TestQ2Interrupted(t *testing.T) {
	srv := targettest.NewServer(targettest.OK)
	defer srv.Close()
	r := tinyResolved(t, srv.URL, t.TempDir(), 200, "fifo", "priority")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	res, err := (&run.Runner{Out: &strings.Builder{}}).Run(ctx, r)
	if err == nil || !strings.Contains(err.Error(), "interrupted") || len(res) != 1 {
		t.Fatalf("err %v, %d results", err, len(res))
	}
	var run record.Run
	b, _ := os.ReadFile(filepath.Join(res[0].Dir, "run.json"))
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if run.Complete || run.Valid || len(readRequests(t, res[0].Dir)) >= 400 {
		t.Errorf("interrupted run: complete %v valid %v", run.Complete, run.Valid)
	}
	if got := srv.Policies(); len(got) != 1 {
		t.Errorf("policies after interrupt: %v (the second sub-run must not start)", got)
	}
}

// TestQ2SameSeedSameRequests runs Q2 twice with one seed and compares what
// was sent: the same requests (type, tenant, priority) in the same order,
// with the same headers.
func TestQ2SameSeedSameRequests(t *testing.T) {
	shape := func() []string {
		srv := targettest.NewServer(targettest.OK)
		defer srv.Close()
		r := tinyResolved(t, srv.URL, t.TempDir(), 12, "fifo")
		res, err := (&run.Runner{Out: &strings.Builder{}}).Run(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		reqs := readRequests(t, res[0].Dir)
		out := make([]string, len(reqs))
		for _, q := range reqs {
			out[q.Seq] = q.Type + "/" + q.Tenant + "/" + q.Priority
		}
		for _, h := range srv.Headers() {
			if h.Get("X-Tenant-Id") == "" || h.Get("X-Request-Priority") == "" || h.Get("X-Request-Type") == "" || h.Get("X-SLO-Deadline-Ms") == "" {
				t.Errorf("request without the sagebench headers: %v", h)
			}
		}
		return out
	}
	a, b := shape(), shape()
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different requests:\n%v\n%v", a, b)
	}
}

func readRequests(t *testing.T, dir string) []record.Request {
	t.Helper()
	var reqs []record.Request
	err := record.ReadRequestsFile(filepath.Join(dir, "requests.jsonl"), func(_ int, r record.Request) { reqs = append(reqs, r) })
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}
