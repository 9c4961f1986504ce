package q1

import (
	"fmt"
	"math/rand/v2"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/workload"
)

// questions draws the run's n questions and their lengths: lengths from q1.question_tokens
// (seeded by the run's seed), each the words of one corpus document in a
// random order fitted to its length in the run's tokenizer. The same
// seed, config and tokenizer give the same questions, so local, --nodes
// and Ray runs ask the same.
func (c *Config) questions(ix *corpus.Corpus, n int, env *workload.Env) (qs []corpus.Query, lengths []int, err error) {
	if lengths, err = c.questionLengths(n, env.Seed); err != nil {
		return nil, nil, err
	}
	synth := env.Prompts
	if synth == nil {
		synth = shape.DefaultSynth()
	}
	return ix.QueriesOf(n, env.Seed, func(i int, doc []string) string {
		return synth.Fit(doc, lengths[i], uint64(env.Seed)+uint64(i)*0x9e3779b97f4a7c15)
	}), lengths, nil
}

// maxQuestionsTokens bounds the tokens of all of a run's questions,
// which are built before the first is sent (~6 bytes a token: 400 MB).
const maxQuestionsTokens = 1 << 26

// questionLengths draws the n questions' lengths in tokens for seed: what
// questions builds and the plan (--dry-run) summarizes. More than
// maxQuestionsTokens in all is an error naming the key.
func (c *Config) questionLengths(n int, seed int64) ([]int, error) {
	sm, err := c.QuestionTokens.Compile("q1.question_tokens", 1)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x71756573))
	lengths := make([]int, n)
	total := 0
	for i := range lengths {
		lengths[i] = sm.Draw(rng)
		if total += lengths[i]; total > maxQuestionsTokens {
			return nil, fmt.Errorf("q1.question_tokens: %d questions would hold more than %d tokens in all; shorten the questions or the schedule", n, maxQuestionsTokens)
		}
	}
	return lengths, nil
}
