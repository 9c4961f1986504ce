package runconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
	"github.com/sagebench/sagebench/internal/workload/q2"
	"github.com/sagebench/sagebench/internal/workload/q3"
	"github.com/sagebench/sagebench/internal/workload/q4"
	"github.com/sagebench/sagebench/internal/workload/q6"
)

// TestDatasetIsMeasuredInTheRunsTokenizer: a run config's `tokenizer:`
// reaches a Q's prompt dataset through Resolve, so the plan (what
// --dry-run prints and the run sends) has the lengths of that tokenizer,
// for every class of Q2, Q3, Q4 and Q6 and the answers as well as the prompts.
func TestDatasetIsMeasuredInTheRunsTokenizer(t *testing.T) {
	const q0, a = "数据集的长度以运行的分词器计算，不是默认的。", "答案的长度也一样：以同一个分词器计算。"
	path := filepath.Join(t.TempDir(), "sharegpt.json")
	if err := os.WriteFile(path, []byte(`[{"conversations": [{"from": "human", "value": "`+q0+`"}, {"from": "gpt", "value": "`+a+`"}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"", tokenizer.O200K} {
		for _, q := range []workload.Spec{q2.Spec(), q3.Spec(), q4.Spec(), q6.Spec()} {
			t.Run(q.ID+" tokenizer "+spec, func(t *testing.T) { measuredIn(t, q, spec, path, q0, a) })
		}
	}
}

// measuredIn checks that Q q's plan has the lengths of q0 and a in spec.
func measuredIn(t *testing.T, q workload.Spec, spec, path, q0, a string) {
	tok, err := tokenizer.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultShared()
	s.Quick = true
	f, err := ParseConfig("c.yaml", []byte("tokenizer: "+spec+"\n"+q.Section()+":\n  llm:\n    source: {file: "+path+", format: sharegpt}\n"), &s, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := Resolve(q, s, f, workload.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := r.Workload.Plan(1)
	if err != nil {
		t.Fatal(err)
	}
	classes := 0
	for _, d := range plan.Phases[0].Tokens {
		classes++
		if d.Input.Mean != float64(tok.Count(q0)) || d.Output.Mean != float64(tok.Count(a)) {
			t.Errorf("class %s: %v→%v tokens, want %d→%d (%s)", d.Class, d.Input.Mean, d.Output.Mean, tok.Count(q0), tok.Count(a), tok.Name())
		}
	}
	if classes == 0 {
		t.Fatal("the plan has no token shapes")
	}
}

// TestEmbeddingTokenizerResolved: `embedding_tokenizer:` is resolved into
// the Ref the run counts embedding inputs with, is part of the effective
// config (run.json), and an unknown one is refused naming the key.
func TestEmbeddingTokenizerResolved(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, spec, err string
	}{
		{"set", "embedding_tokenizer: o200k_base\n", tokenizer.O200K, ""},
		{"unset", "", "", ""},
		{"unknown", "embedding_tokenizer: no-such-tokenizer\n", "", "embedding_tokenizer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultShared()
			s.Quick = true
			f, err := ParseConfig("c.yaml", []byte(tc.yaml), &s, env(nil))
			if err == nil {
				var r Resolved
				r, _, err = Resolve(q2.Spec(), s, f, workload.Overrides{})
				if err == nil {
					if got := r.EmbeddingTokenizer.Spec(); got != tc.spec {
						t.Errorf("EmbeddingTokenizer %q, want %q", got, tc.spec)
					}
					if recorded := strings.Contains(string(r.RunConfig), `"embedding_tokenizer":"`+tc.spec+`"`); recorded != (tc.spec != "") {
						t.Errorf("run config %s: embedding_tokenizer recorded %v", r.RunConfig, recorded)
					}
					if tc.spec == "" && r.EmbeddingTokenizer != nil {
						t.Error("an embedding tokenizer without one configured")
					}
				}
			}
			if (err != nil) != (tc.err != "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want one naming %q", err, tc.err)
			}
		})
	}
}
