package runconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
	"github.com/sagebench/sagebench/internal/workload/q2"
)

// TestDatasetIsMeasuredInTheRunsTokenizer: a run config's `tokenizer:`
// reaches a Q's prompt dataset through Resolve, so the plan (what
// --dry-run prints and the run sends) has the lengths of that tokenizer,
// for every class of Q2 and the answers as well as the prompts.
func TestDatasetIsMeasuredInTheRunsTokenizer(t *testing.T) {
	const q, a = "数据集的长度以运行的分词器计算，不是默认的。", "答案的长度也一样：以同一个分词器计算。"
	path := filepath.Join(t.TempDir(), "sharegpt.json")
	if err := os.WriteFile(path, []byte(`[{"conversations": [{"from": "human", "value": "`+q+`"}, {"from": "gpt", "value": "`+a+`"}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"", tokenizer.O200K} {
		t.Run("tokenizer "+spec, func(t *testing.T) {
			tok, err := tokenizer.Load(spec)
			if err != nil {
				t.Fatal(err)
			}
			s := DefaultShared()
			s.Quick = true
			f, err := ParseConfig("c.yaml", []byte("tokenizer: "+spec+"\nq2:\n  llm:\n    source: {file: "+path+", format: sharegpt}\n"), &s, env(nil))
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := Resolve(q2.Spec(), s, f, workload.Overrides{})
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
				if d.Input.Mean != float64(tok.Count(q)) || d.Output.Mean != float64(tok.Count(a)) {
					t.Errorf("class %s: %v→%v tokens, want %d→%d (%s)", d.Class, d.Input.Mean, d.Output.Mean, tok.Count(q), tok.Count(a), tok.Name())
				}
			}
			if classes == 0 {
				t.Fatal("the plan has no token shapes")
			}
		})
	}
}
