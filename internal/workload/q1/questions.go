package q1

import (
	"fmt"
	"math/rand/v2"

	"github.com/sagebench/sagebench/internal/corpus"
	"github.com/sagebench/sagebench/internal/workload"
)

// questionSet is a run's questions: their texts and documents, their
// lengths in the run's tokenizer, and how many of them hold no words of
// their document (a tokenizer that does not count space-separated words
// additively: Synth.Fit's fallback).
type questionSet struct {
	queries   []corpus.Query
	tokens    []int
	synthetic int
}

// note says that synthetic questions were asked, or "".
func (q questionSet) note(tok string) string {
	if q.synthetic == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d questions hold no words of their document: the tokenizer %s does not count space-separated words additively, so they are synthetic words of the exact length (their retrieval has no answer)", q.synthetic, len(q.queries), tok)
}

// questions draws the run's n questions: lengths from q1.question_tokens
// (seeded by the run's seed), each the words of one corpus document in a
// random order fitted to its length in the run's tokenizer. The same
// seed, config and tokenizer give the same questions, so local, --nodes
// and Ray runs ask the same.
func (c *Config) questions(ix *corpus.Corpus, n int, env *workload.Env) (questionSet, error) {
	lengths, err := c.questionLengths(n, env.Seed)
	if err != nil {
		return questionSet{}, err
	}
	synth := env.Synth()
	qs := questionSet{tokens: lengths}
	qs.queries = ix.QueriesOf(n, env.Seed, func(i int, doc []string) string {
		text, ok := synth.Fit(doc, lengths[i], uint64(env.Seed)+uint64(i)*0x9e3779b97f4a7c15)
		if !ok {
			qs.synthetic++
		}
		return text
	})
	return qs, nil
}

// maxQuestionsTokens bounds the tokens of all of a run's questions,
// which are built before the first is sent: ~100 MB of text, and ~15 s
// of tokenizing at ~1 µs a token (Fit counts the words, then the text).
const maxQuestionsTokens = 1 << 24

// questionLengths draws the n questions' lengths in tokens for seed: what
// questions builds and the plan (--dry-run) summarizes. More than
// maxQuestionsTokens in all is an error naming the key.
func (c *Config) questionLengths(n int, seed int64) ([]int, error) {
	sm := c.questionTokens
	if sm == nil { // not validated (tests)
		var err error
		if sm, err = c.QuestionTokens.Compile("q1.question_tokens", 1); err != nil {
			return nil, err
		}
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
