package traffic_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/traffic"
)

// TestUseTokenizerReachesEveryShape: every LLMShape of a config — a
// field, behind a pointer, in a slice, in a nested struct — has its
// dataset measured in the run's tokenizer, whether UseTokenizer comes
// before or after Validate (no order to remember); an unexported field
// is left alone.
func TestUseTokenizerReachesEveryShape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sharegpt.json")
	if err := os.WriteFile(path, []byte(`[{"conversations": [{"from": "human", "value": "数据集的长度"}, {"from": "gpt", "value": "答案"}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	o200k, err := tokenizer.Load(tokenizer.O200K)
	if err != nil {
		t.Fatal(err)
	}
	src := func() traffic.LLMShape {
		return traffic.LLMShape{Model: "m", Shape: shape.Shape{InputTokens: shape.FixedDist(1), OutputTokens: shape.FixedDist(1),
			Source: &shape.Source{File: path, Format: "sharegpt"}}}
	}
	type nested struct{ LLM traffic.LLMShape }
	type config struct {
		LLM     traffic.LLMShape
		Ptr     *traffic.LLMShape
		Classes []nested
		Inner   struct{ Deep nested }
		hidden  traffic.LLMShape
	}
	for _, validateFirst := range []bool{false, true} {
		name := map[bool]string{false: "before Validate", true: "after Validate"}[validateFirst]
		t.Run(name, func(t *testing.T) {
			p := src()
			c := &config{LLM: src(), Ptr: &p, Classes: []nested{{src()}, {src()}}, Inner: struct{ Deep nested }{nested{src()}}, hidden: src()}
			all := []*traffic.LLMShape{&c.LLM, c.Ptr, &c.Classes[0].LLM, &c.Classes[1].LLM, &c.Inner.Deep.LLM}
			validate := func() {
				for _, s := range append(all, &c.hidden) {
					if err := s.Validate("test.llm"); err != nil {
						t.Fatal(err)
					}
				}
			}
			if validateFirst {
				validate()
			}
			traffic.UseTokenizer(c, tokenizer.RefOf(tokenizer.O200K, o200k))
			if !validateFirst {
				validate()
			}
			for i, s := range all {
				if !s.Drawer().MeasuredIn(o200k) {
					t.Errorf("shape %d is not measured in o200k_base", i)
				}
			}
			if c.hidden.Drawer().MeasuredIn(o200k) {
				t.Error("an unexported shape was given the tokenizer")
			}
		})
	}
}
