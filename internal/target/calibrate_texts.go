package target

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Bounds of counting given prompts (a dataset's) with the server.
const (
	MaxServerTexts   = 2000
	TextsTimeout     = 60 * time.Second
	textsConcurrency = 4
	// textsVerified is how many given prompts are checked again after a
	// system prompt (the template's tokens for that structure added).
	textsVerified = 4
)

// TooManyTextsError says a dataset has more distinct prompts than
// tokenizer: server counts before a load.
type TooManyTextsError struct{ N int }

func (e *TooManyTextsError) Error() string {
	return fmt.Sprintf("tokenizer: server counts every prompt of a dataset with the target before the load, at most %d, and the run's datasets have %d distinct prompts; use a smaller dataset or give tokenizer: the model's tokenizer.json", MaxServerTexts, e.N)
}

// CountTexts has the target count each distinct text of texts (a
// dataset's prompts) once, as a user message for every model of cal
// (small concurrency; within TextsTimeout): its content count is the
// server's count less the template's tokens for a user message, which
// every model must agree on. A few are then checked after a system
// prompt. The result is cal that knows them (Calibrated.WithTexts).
func (t *Target) CountTexts(ctx context.Context, cal *tokenizer.Calibrated, texts []string) (*tokenizer.Calibrated, error) {
	seen := map[string]bool{}
	var order []string
	for _, s := range texts {
		if !seen[s] && s != "" {
			seen[s] = true
			order = append(order, s)
		}
	}
	if len(order) > MaxServerTexts {
		return nil, &TooManyTextsError{N: len(order)}
	}
	ctx, cancel := context.WithTimeout(ctx, TextsTimeout)
	defer cancel()
	c := cal.Calibration()
	over, ok := cal.ChatOverhead([]string{"user"})
	if !ok {
		return nil, errors.New("tokenizer: server: the user-message structure was not calibrated")
	}
	counts := map[string]int{}
	var asked atomic.Int64
	for _, m := range c.Models {
		if err := t.countAll(ctx, m, over, order, counts, &asked); err != nil {
			return nil, err
		}
	}
	n, err := t.verifyTexts(ctx, cal.WithTexts(counts, 0), order)
	return cal.WithTexts(counts, int(asked.Load())+n), err
}

// countAll counts order for model, textsConcurrency at a time, into
// counts (content tokens), adding the requests sent to asked; a model
// that disagrees with an earlier one, or a count below the template's
// own tokens, is a CalibrationError. After the first error no further
// request is sent.
func (t *Target) countAll(ctx context.Context, model string, over int, order []string, counts map[string]int, asked *atomic.Int64) error {
	var mu sync.Mutex
	var first error
	failed := func() bool { mu.Lock(); defer mu.Unlock(); return first != nil }
	sem := make(chan struct{}, textsConcurrency)
	var wg sync.WaitGroup
	for i, text := range order {
		sem <- struct{}{}
		if ctx.Err() != nil || failed() {
			<-sem
			break
		}
		asked.Add(1)
		wg.Go(func() {
			defer func() { <-sem }()
			n, err := t.CountMessages(ctx, model, []chattemplate.Message{{Role: "user", Content: text}})
			mu.Lock()
			defer mu.Unlock()
			if first == nil {
				first = countOne(model, i, n, over, err, counts, text)
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = fmt.Errorf("tokenizer: server: counting %d dataset prompts took longer than %v: %w", len(order), TextsTimeout, ctx.Err())
	}
	return first
}

// countOne files the content count of the dataset's prompt i (text) for
// model into counts — the server's count of it in a user message, raw,
// less the template's tokens, over — or says why it cannot.
func countOne(model string, i, raw, over int, err error, counts map[string]int, text string) error {
	n := raw - over
	prev, counted := counts[text]
	switch {
	case err != nil:
		return fmt.Errorf("tokenizer: server: counting the dataset's prompt %d: %w", i+1, err)
	case n < 0:
		return &CalibrationError{Model: model, Reason: fmt.Sprintf("it counts the dataset's prompt %d in a user message as %d tokens, fewer than the template's own %d", i+1, raw, over)}
	case counted && prev != n:
		return &CalibrationError{Model: model, Reason: fmt.Sprintf("it counts the dataset's prompt %d as %d tokens where another model counts %d; run them separately", i+1, n, prev)}
	}
	counts[text] = n
	return nil
}

// verifyTexts checks a few given prompts after a system prompt: the
// server must count them as cal predicts. It returns the requests sent.
func (t *Target) verifyTexts(ctx context.Context, cal *tokenizer.Calibrated, order []string) (sent int, err error) {
	if _, ok := cal.ChatOverhead([]string{"system", "user"}); !ok {
		return 0, nil // the run sends them alone: counted as they are sent
	}
	synth, err := shape.NewSynth(cal)
	if err != nil {
		return 0, err
	}
	for i, text := range order[:min(len(order), textsVerified)] {
		msgs := []chattemplate.Message{{Role: "system", Content: synth.Block(uint64(i), systemTokens)}, {Role: "user", Content: text}}
		want, err := synth.CountChat(msgs)
		if err != nil {
			return sent, err
		}
		for _, m := range cal.Calibration().Models {
			sent++
			got, err := t.CountMessages(ctx, m, msgs)
			if err != nil {
				return sent, fmt.Errorf("tokenizer: server: verifying the dataset's prompts: %w", err)
			}
			if got != want {
				return sent, &CalibrationError{Model: m, Reason: fmt.Sprintf("the dataset's prompt %d after a system prompt counts %d tokens where its count alone and the template's predict %d", i+1, got, want)}
			}
		}
	}
	return sent, nil
}
