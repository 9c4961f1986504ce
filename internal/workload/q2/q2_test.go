package q2

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

func TestQ2MixIsReproducible(t *testing.T) {
	c := Default(false)
	a, b := drawMix(c, 42, 1000), drawMix(c, 42, 1000)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different request mixes")
	}
	if reflect.DeepEqual(a, drawMix(c, 43, 1000)) {
		t.Fatal("different seeds gave the same request mix")
	}
	llm, crit := 0, 0
	for _, it := range a {
		if it.Type == protocol.TypeLLM {
			llm++
		}
		if it.Priority == "critical" {
			crit++
		}
	}
	if llm < 650 || llm > 750 || crit < 60 || crit > 140 {
		t.Errorf("mix of 1000: %d llm (ratio 0.7), %d critical (weight 0.1)", llm, crit)
	}
	p1, _ := (&q2{cfg: c}).Plan(42)
	p2, _ := (&q2{cfg: c}).Plan(42)
	if !reflect.DeepEqual(p1, p2) || len(p1.Phases) != 8 || p1.Phases[0].Requests != 450 || p1.Phases[4].Name != "fifo.r2" {
		t.Errorf("plans differ or are wrong: %+v", p1)
	}
}

func TestQ2QuickShrinksEveryKnob(t *testing.T) {
	full, quick := Default(false), Default(true)
	knobs := []struct {
		name        string
		full, quick float64
	}{
		{"schedule.count", float64(full.Schedule.Count), float64(quick.Schedule.Count)},
		{"schedule.rate", full.Schedule.Rate, quick.Schedule.Rate},
		{"llm.output_tokens", float64(full.LLM.OutputTokens.Value), float64(quick.LLM.OutputTokens.Value)},
		{"llm.input_tokens", float64(full.LLM.InputTokens.Value), float64(quick.LLM.InputTokens.Value)},
		{"embedding.inputs", float64(full.Embedding.Inputs), float64(quick.Embedding.Inputs)},
		{"embedding.words", float64(full.Embedding.Words), float64(quick.Embedding.Words)},
		{"rounds", float64(full.Rounds), float64(quick.Rounds)},
		{"stack.llm_slots", float64(full.Stack.LLMSlots), float64(quick.Stack.LLMSlots)},
	}
	for _, k := range knobs {
		if k.quick >= k.full {
			t.Errorf("%s: quick %v is not below full %v", k.name, k.quick, k.full)
		}
	}
	if quick.Schedule.Count != 150 || quick.Schedule.Rate != 26 || full.Schedule.Count != 450 || full.Schedule.Rate != 30 {
		t.Errorf("scales: full %+v quick %+v", full.Schedule, quick.Schedule)
	}
}

func TestQ2Override(t *testing.T) {
	rate, n, ratio, d := 7.0, 30, 0.25, 2*time.Second
	cases := []struct {
		name  string
		o     workload.Overrides
		check func(c *Config) bool
	}{
		{"rate", workload.Overrides{Rate: &rate}, func(c *Config) bool { return c.Schedule.Rate == 7 && c.Schedule.Count == 450 }},
		{"count", workload.Overrides{TotalRequests: &n}, func(c *Config) bool { return c.Schedule.Count == 30 }},
		{"ratio", workload.Overrides{LLMRatio: &ratio}, func(c *Config) bool { return c.LLMRatio == 0.25 }},
		{"duration alone", workload.Overrides{Duration: &d}, func(c *Config) bool { return c.Schedule.Duration == d && c.Schedule.Count == 0 }},
		{"duration and count", workload.Overrides{Duration: &d, TotalRequests: &n}, func(c *Config) bool {
			return c.Schedule.Duration == d && c.Schedule.Count == 30
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Default(false)
			if ign := cfg.Override(c.o); len(ign) != 0 || !c.check(cfg) {
				t.Errorf("ignored %v, config %+v", ign, cfg)
			}
		})
	}
}

func TestQ2Validate(t *testing.T) {
	cases := map[string]func(c *Config){
		"q2.llm_ratio":                          func(c *Config) { c.LLMRatio = 1.5 },
		"q2.policies: unknown policy":           func(c *Config) { c.Policies = []string{"fifo", "lottery"} },
		"q2.policies is empty":                  func(c *Config) { c.Policies = nil },
		"q2.policies: \"fifo\" is listed twice": func(c *Config) { c.Policies = []string{"fifo", "fifo"} },
		"q2.classes: unknown name":              func(c *Config) { c.Classes = []Class{{Priority: "urgent", Weight: 1}} },
		"q2.rounds":                             func(c *Config) { c.Rounds = 0 },
		"q2.stack":                              func(c *Config) { c.Stack.LLMSlots = 0 },
		"q2.tenants: weights sum to 0":          func(c *Config) { c.Tenants = []traffic.Weighted{{Name: "a", Weight: 0}} },
		"q2.schedule.rate":                      func(c *Config) { c.Schedule.Rate = 0 },
		"q2.llm.model":                          func(c *Config) { c.LLM.Model = "" },
		"q2.llm.prompt_words 100000000":         func(c *Config) { c.LLM.PromptWords = 100_000_000 },
		"q2.classes: critical slo":              func(c *Config) { c.Classes[0].SLO.LLMTTFT = -1 },
		"q2.classes: normal slo":                func(c *Config) { c.Classes[1].SLO.EmbeddingE2E = 25 * time.Hour },
	}
	for want, mutate := range cases {
		c := Default(true)
		mutate(c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v", want, err)
		}
	}
	if err := Default(false).Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
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
			q := &q2{cfg: Default(true)}
			phase, note, err := q.switchPolicy(context.Background(), tg, "fifo")
			if err != nil || phase != "target" || !strings.Contains(note, tc.want) {
				t.Errorf("phase %q, err %v, note %q; want phase target and a note naming %q", phase, err, note, tc.want)
			}
		})
	}
}

func TestQ2StackQueues(t *testing.T) {
	q := &q2{cfg: Default(false)}
	got := string(q.StackYAML())
	for _, want := range []string{"{id: llm-0, kind: llm, profile: llama3.1-8b-h100, slots: 8}", "{id: llm-1,", "id: embed-0", "policy: fifo"} {
		if !strings.Contains(got, want) {
			t.Errorf("stack YAML lacks %q:\n%s", want, got)
		}
	}
}
