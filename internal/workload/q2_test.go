package workload

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/target/targettest"
)

func TestQ2MixIsReproducible(t *testing.T) {
	c := DefaultQ2(false)
	a, b := drawMix(c, 42, 1000), drawMix(c, 42, 1000)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different request mixes")
	}
	if reflect.DeepEqual(a, drawMix(c, 43, 1000)) {
		t.Fatal("different seeds gave the same request mix")
	}
	llm, crit := 0, 0
	for _, it := range a {
		if it.Type == TypeLLM {
			llm++
		}
		if it.Priority == "critical" {
			crit++
		}
	}
	if llm < 650 || llm > 750 || crit < 20 || crit > 90 {
		t.Errorf("mix of 1000: %d llm (ratio 0.7), %d critical (weight 0.05)", llm, crit)
	}
	p1, _ := (&q2{cfg: c}).Plan(42)
	p2, _ := (&q2{cfg: c}).Plan(42)
	if !reflect.DeepEqual(p1, p2) || len(p1.Phases) != 4 || p1.Phases[0].Requests != 1000 {
		t.Errorf("plans differ or are wrong: %+v", p1)
	}
}

func TestQ2QuickShrinksEveryKnob(t *testing.T) {
	full, quick := DefaultQ2(false), DefaultQ2(true)
	knobs := []struct {
		name        string
		full, quick float64
	}{
		{"schedule.count", float64(full.Schedule.Count), float64(quick.Schedule.Count)},
		{"schedule.rate", full.Schedule.Rate, quick.Schedule.Rate},
		{"llm.max_tokens", float64(full.LLM.MaxTokens), float64(quick.LLM.MaxTokens)},
		{"llm.prompt_words", float64(full.LLM.PromptWords), float64(quick.LLM.PromptWords)},
		{"embedding.inputs", float64(full.Embedding.Inputs), float64(quick.Embedding.Inputs)},
		{"embedding.words", float64(full.Embedding.Words), float64(quick.Embedding.Words)},
	}
	for _, k := range knobs {
		if k.quick >= k.full {
			t.Errorf("%s: quick %v is not below full %v", k.name, k.quick, k.full)
		}
	}
	if quick.Schedule.Count != 100 || quick.Schedule.Rate != 20 || full.Schedule.Count != 1000 || full.Schedule.Rate != 50 {
		t.Errorf("scales: full %+v quick %+v", full.Schedule, quick.Schedule)
	}
}

func TestQ2Override(t *testing.T) {
	rate, n, ratio, d := 7.0, 30, 0.25, 2*time.Second
	cases := []struct {
		name  string
		o     Overrides
		check func(c *Q2Config) bool
	}{
		{"rate", Overrides{Rate: &rate}, func(c *Q2Config) bool { return c.Schedule.Rate == 7 && c.Schedule.Count == 1000 }},
		{"count", Overrides{TotalRequests: &n}, func(c *Q2Config) bool { return c.Schedule.Count == 30 }},
		{"ratio", Overrides{LLMRatio: &ratio}, func(c *Q2Config) bool { return c.LLMRatio == 0.25 }},
		{"duration alone", Overrides{Duration: &d}, func(c *Q2Config) bool { return c.Schedule.Duration == d && c.Schedule.Count == 0 }},
		{"duration and count", Overrides{Duration: &d, TotalRequests: &n}, func(c *Q2Config) bool {
			return c.Schedule.Duration == d && c.Schedule.Count == 30
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultQ2(false)
			if ign := cfg.Override(c.o); len(ign) != 0 || !c.check(cfg) {
				t.Errorf("ignored %v, config %+v", ign, cfg)
			}
		})
	}
}

func TestQ2Validate(t *testing.T) {
	cases := map[string]func(c *Q2Config){
		"q2.llm_ratio":                 func(c *Q2Config) { c.LLMRatio = 1.5 },
		"q2.policies: unknown policy":  func(c *Q2Config) { c.Policies = []string{"fifo", "lottery"} },
		"q2.policies is empty":         func(c *Q2Config) { c.Policies = nil },
		"q2.priorities: unknown name":  func(c *Q2Config) { c.Priorities = []Weighted{{"urgent", 1}} },
		"q2.tenants: weights sum to 0": func(c *Q2Config) { c.Tenants = []Weighted{{"a", 0}} },
		"q2.schedule.rate":             func(c *Q2Config) { c.Schedule.Rate = 0 },
		"q2.llm: model":                func(c *Q2Config) { c.LLM.Model = "" },
		"q2.slo":                       func(c *Q2Config) { c.SLO.LLMTTFT = -1 },
		"q2.slo: bounds must be":       func(c *Q2Config) { c.SLO.EmbeddingE2E = 25 * time.Hour },
	}
	for want, mutate := range cases {
		c := DefaultQ2(true)
		mutate(c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v", want, err)
		}
	}
	if err := DefaultQ2(false).Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}

// tinyResolved resolves Q2 with n requests per policy against url.
func tinyResolved(t *testing.T, url, out string, n int, policies ...string) Resolved {
	t.Helper()
	s := DefaultShared()
	s.OutputDir, s.Target.URL, s.Quick = out, url, true
	s.Validity = summaryLoose()
	s.Drain = time.Second
	yaml := "q2:\n  schedule: {process: poisson, rate: 50, count: " + itoa(n) + "}\n  policies: [" + strings.Join(policies, ", ") + "]\n"
	f, err := ParseConfig("t.yaml", []byte(yaml), &s, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := Resolve(q2Spec(), s, f, Overrides{})
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
			res, err := (&Runner{Out: &strings.Builder{}, Env: record.CollectEnvironment()}).Run(context.Background(), r)
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
	res, err := (&Runner{Out: &strings.Builder{}}).Run(ctx, r)
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
		res, err := (&Runner{Out: &strings.Builder{}}).Run(context.Background(), r)
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

// TestQ2PolicyNoteKeepsTheCause: when the admin API exists but refuses
// us, the note that the run fell back to the target's own policy must
// say why and what to do, not only "cannot switch policy".
func TestQ2PolicyNoteKeepsTheCause(t *testing.T) {
	tests := []struct {
		name   string
		status int
		want   string
	}{
		{"no admin api", http.StatusNotFound, "no /admin/policy"},
		{"refused", http.StatusUnauthorized, "admin_token_env"},
		{"forbidden", http.StatusForbidden, "403"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/admin/policy" {
					w.WriteHeader(tc.status)
				}
			}))
			defer srv.Close()
			tg, err := target.Open(context.Background(), target.Config{URL: srv.URL}, target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close(context.Background())
			q := &q2{cfg: DefaultQ2(true)}
			phase, note, err := q.switchPolicy(context.Background(), tg, "fifo")
			if err != nil || phase != "target" || !strings.Contains(note, tc.want) {
				t.Errorf("phase %q, err %v, note %q; want phase target and a note naming %q", phase, err, note, tc.want)
			}
		})
	}
}

// TestQ2DeadlineHeader: X-SLO-Deadline-Ms carries the SLO bound in whole
// milliseconds rounded up (never tighter than the bound, never "0", which
// the gateway reads as no deadline) and is absent when there is no bound.
func TestQ2DeadlineHeader(t *testing.T) {
	tests := []struct {
		name  string
		bound time.Duration
		want  string
	}{
		{"no bound", 0, ""},
		{"sub-millisecond", 500 * time.Microsecond, "1"},
		{"fractional", 1500 * time.Microsecond, "2"},
		{"whole", 5 * time.Second, "5000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := deadlineMs(tc.bound); got != tc.want {
				t.Errorf("deadlineMs(%v) = %q, want %q", tc.bound, got, tc.want)
			}
		})
	}
}
