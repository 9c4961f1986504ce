package run

import (
	"context"
	"fmt"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/target"
)

// tokenizeTimeout bounds the /tokenize preflight, all samples together.
const tokenizeTimeout = 10 * time.Second

// tokenizeSamples are the user-prompt lengths the preflight asks about,
// each alone and after a system prompt of 64 tokens.
var tokenizeSamples = []int{16, 128, 512, 2048}

// tokenizeChecks is tokenizeCheck for each model the run asks for (each
// class's, once): a note per model that answers, naming it, so that a
// mismatch is reported for the class whose model counts differently.
// All models together are bounded by tokenizeTimeout.
func tokenizeChecks(ctx context.Context, t *target.Target, synth *shape.Synth, models []string) []string {
	ctx, cancel := context.WithTimeout(ctx, tokenizeTimeout)
	defer cancel()
	var notes []string
	seen := map[string]bool{}
	for _, m := range models {
		if m == "" || seen[m] {
			continue
		}
		seen[m] = true
		if note := tokenizeCheck(ctx, t, synth, m); note != "" {
			notes = append(notes, note)
		}
	}
	return notes
}

// tokenizeCheck asks a URL target that offers vLLM's POST /tokenize
// (also SGLang's) to count sample chat prompts of the run's synthesizer
// and compares with sagebench's count of them — the templated count when
// the run has a chat template, the messages' text otherwise, as a
// request's input_tokens is. It returns the note for the run's record:
// the server's count and ours, or "" when the target offers no /tokenize.
func tokenizeCheck(ctx context.Context, t *target.Target, synth *shape.Synth, model string) string {
	ctx, cancel := context.WithTimeout(ctx, tokenizeTimeout)
	defer cancel()
	var ours, theirs, n, differ int
	for i, k := range tokenizeSamples {
		for _, system := range []bool{false, true} {
			msgs := []chattemplate.Message{{Role: "user", Content: synth.Prompt(uint64(i+1)*7919, k)}}
			if system {
				msgs = append([]chattemplate.Message{{Role: "system", Content: synth.Block(uint64(i), 64)}}, msgs...)
			}
			mine, err := ourCount(synth, msgs)
			if err != nil {
				return "POST /tokenize preflight: " + err.Error()
			}
			got, err := t.CountMessages(ctx, model, msgs)
			if err != nil {
				if n == 0 && i == 0 && !system {
					return "" // no /tokenize: nothing to compare with
				}
				return "POST /tokenize preflight stopped: " + err.Error()
			}
			ours, theirs, n = ours+mine, theirs+got, n+1
			if got != mine {
				differ++
			}
		}
	}
	if differ == 0 {
		return fmt.Sprintf("POST /tokenize (model %s): the server counts every one of %d sample prompts as sagebench does (%d tokens in all)", model, n, ours)
	}
	return fmt.Sprintf("POST /tokenize (model %s): the server's prompt counts differ from sagebench's on %d of %d sample prompts (%d tokens against %d, %+.1f per prompt): input_tokens is not the server's prompt_tokens; give the model's tokenizer.json and chat_template (its tokenizer_config.json)",
		model, differ, n, theirs, ours, float64(theirs-ours)/float64(n))
}

// ourCount is a prompt's input_tokens: Synth.CountChat (templated when
// the run has a template; with tokenizer: server, the calibrated count).
func ourCount(synth *shape.Synth, msgs []chattemplate.Message) (int, error) {
	return synth.CountChat(msgs)
}
