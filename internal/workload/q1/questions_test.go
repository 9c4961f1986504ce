package q1

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestQ1QuestionsInTokens: every question is exactly its drawn length in
// the run's tokenizer (fixed and lognormal, cl100k and o200k), starts
// with a word of the document it was made from (so its answer exists),
// and the same seed gives the same questions; query_words folds into
// question_tokens as a count of tokens.
func TestQ1QuestionsInTokens(t *testing.T) {
	ix, err := corpus.New(corpus.Config{Size: 200, Dim: 16, Seed: 3}, func(s string) []float32 { return corpus.Vector(s, 16) })
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		tok      string
		dist     shape.Dist
		lo, hi   int
		distinct bool // lengths vary
	}{
		{"fixed default", "", shape.FixedDist(24), 24, 24, false},
		{"fixed o200k", tokenizer.O200K, shape.FixedDist(24), 24, 24, false},
		{"lognormal", "", shape.Dist{Kind: shape.LogNormal, Median: 20, Sigma: 0.6, Min: 4, Max: 120}, 4, 120, true},
		{"longer than a document", "", shape.FixedDist(900), 900, 900, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := tokenizer.Load(tc.tok)
			if err != nil {
				t.Fatal(err)
			}
			synth, err := shape.NewSynth(tok)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Default(true)
			cfg.QuestionTokens = tc.dist
			env := &workload.Env{Seed: 11, Prompts: synth}
			set, err := cfg.questions(ix, 60, env)
			if err != nil {
				t.Fatal(err)
			}
			qs, drawn := set.queries, set.tokens
			if set.synthetic != 0 || set.note(tok.Name()) != "" {
				t.Errorf("%d synthetic questions with %s", set.synthetic, tok.Name())
			}
			lengths := map[int]bool{}
			for i, q := range qs {
				n := tok.Count(q.Text)
				if n < tc.lo || n > tc.hi || n != drawn[i] {
					t.Fatalf("question %d has %d tokens, want its drawn %d in [%d, %d]: %q", i, n, drawn[i], tc.lo, tc.hi, q.Text)
				}
				lengths[n] = true
				if first := strings.Fields(q.Text)[0]; !strings.Contains(" "+ix.Doc(q.DocID)+" ", " "+first+" ") {
					t.Fatalf("question %d starts with %q, not a word of document %d", i, first, q.DocID)
				}
			}
			if tc.distinct != (len(lengths) > 1) {
				t.Errorf("%d distinct lengths", len(lengths))
			}
			again, _ := cfg.questions(ix, 60, env)
			for i := range qs {
				if again.queries[i] != qs[i] {
					t.Fatalf("question %d differs with the same seed", i)
				}
			}
		})
	}
	if note := (questionSet{queries: make([]corpus.Query, 3), synthetic: 2}).note("x"); !strings.Contains(note, "2 of 3 questions") {
		t.Errorf("note %q, want it to count the synthetic questions", note)
	}
	huge := Default(false)
	huge.QuestionTokens = shape.FixedDist(MaxQuestionTokens)
	if _, err := huge.questionLengths(maxQuestionsTokens/MaxQuestionTokens+1, 1); err == nil || !strings.Contains(err.Error(), "q1.question_tokens") {
		t.Errorf("questions beyond the total bound: %v, want an error naming q1.question_tokens", err)
	}
	cfg := Default(false)
	cfg.QueryWords = 8
	if err := cfg.Validate(); err != nil || cfg.QueryWords != 0 || !reflect.DeepEqual(cfg.QuestionTokens, shape.FixedDist(8)) {
		t.Errorf("query_words 8 → %v, question_tokens %+v, query_words %d; want 8 tokens", err, cfg.QuestionTokens, cfg.QueryWords)
	}
}
