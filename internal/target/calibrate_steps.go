package target

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// words keeps the candidate words every model counts as one token each
// in running text — a prompt of k of them, each after a space, is k
// tokens more than the empty prompt (whatever special tokens the server
// adds to a prompt) — and alone without the space.
func (c *calibration) words(ctx context.Context) error {
	kept := shape.Candidates()
	for _, m := range c.out.Models {
		base, err := c.prompt(ctx, m, "")
		if err != nil {
			return err
		}
		var next []string
		for i := 0; i < len(kept); i += calibrationChunk {
			ws, err := c.keep(ctx, m, base, kept[i:min(i+calibrationChunk, len(kept))])
			if err != nil {
				return err
			}
			next = append(next, ws...)
		}
		if kept, err = c.bare(ctx, m, base, next); err != nil {
			return err
		}
	}
	c.out.Words, c.out.Bare = kept, make([]int, len(kept))
	for i, w := range kept {
		c.out.Bare[i] = c.bareCount[w]
	}
	for _, w := range shape.Candidates() {
		if !slices.Contains(kept, w) {
			c.out.Dropped = append(c.out.Dropped, w)
		}
	}
	return nil
}

// bare counts each word of ws alone without its leading space (what a
// chat template that trims a message, Llama 3's, counts of its first
// word), bareConcurrency at a time, and keeps those every model so far
// counts alike.
func (c *calibration) bare(ctx context.Context, model string, base int, ws []string) ([]string, error) {
	counts := make([]int, len(ws))
	errs := make([]error, len(ws))
	sem := make(chan struct{}, bareConcurrency)
	var wg sync.WaitGroup
	for i, w := range ws {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			n, err := c.prompt(ctx, model, w)
			counts[i], errs[i] = n-base, err
		})
	}
	wg.Wait()
	if err := firstErr(errs); err != nil {
		return nil, err
	}
	if c.bareCount == nil {
		c.bareCount = map[string]int{}
	}
	var out []string
	for i, w := range ws {
		if prev, ok := c.bareCount[w]; ok && prev != counts[i] {
			continue
		}
		c.bareCount[w] = counts[i]
		out = append(out, w)
	}
	return out, nil
}

// bareConcurrency is how many bare counts are asked at once.
const bareConcurrency = 4

// firstErr is the first non-nil error of errs.
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// oneEach says the server counts ws (each after a space) as len(ws)
// tokens in a prompt; base is its count of the empty prompt.
func (c *calibration) oneEach(ctx context.Context, model string, base int, ws []string) (bool, error) {
	n, err := c.prompt(ctx, model, " "+strings.Join(ws, " "))
	return n-base == len(ws), err
}

// keep returns the words of ws that count one token each, together: ws
// itself when it passes; else its halves, bisected, and what survives of
// both counted once more together. Two halves that pass alone but not
// together (a merge across the space between them) are both dropped.
func (c *calibration) keep(ctx context.Context, model string, base int, ws []string) ([]string, error) {
	ok, err := c.oneEach(ctx, model, base, ws)
	if err != nil || ok {
		return ws, err
	}
	if len(ws) == 1 {
		return nil, nil
	}
	h := len(ws) / 2
	l, err := c.keep(ctx, model, base, ws[:h])
	if err != nil {
		return nil, err
	}
	r, err := c.keep(ctx, model, base, ws[h:])
	if err != nil {
		return nil, err
	}
	both := append(slices.Clip(l), r...)
	if len(both) == len(ws) || len(both) == 0 {
		return nil, nil
	}
	if ok, err := c.oneEach(ctx, model, base, both); err != nil || !ok {
		return nil, err
	}
	return both, nil
}

// sample is a message of each role of structure: a system prompt of
// systemTokens before a user prompt of n tokens, chosen by seed; a
// non-empty lead is the user prompt's first word.
func sample(synth *shape.Synth, structure []string, n int, seed uint64, lead string) (msgs []chattemplate.Message, content int) {
	for i, role := range structure {
		if i < len(structure)-1 {
			msgs = append(msgs, chattemplate.Message{Role: role, Content: synth.Block(seed+uint64(i), systemTokens)})
			content += systemTokens
			continue
		}
		text := synth.Prompt(seed, n)
		if lead != "" {
			text = " " + lead + synth.Prompt(seed, n-1)
		}
		msgs = append(msgs, chattemplate.Message{Role: role, Content: text})
	}
	return msgs, content + n
}

// observation is one overhead sample: the server's count less the
// contents' tokens, and what a trimming template would add (the first
// words' bare counts less one).
type observation struct {
	model   string
	n, over int
	lead    int
}

// overheads measures the template's tokens per structure for every
// model — one constant at every length and for every model, or an error
// — and whether the template trims messages: the samples alternate a
// first word that is one token bare and one that is not, and exactly one
// of the two readings (the space kept, or trimmed) must give a constant.
func (c *calibration) overheads(ctx context.Context, synth *shape.Synth) error {
	trimming := c.out
	trimming.Trims = true
	leads := tokenizer.NewCalibrated(trimming)
	one, other := c.leadWords()
	obs := map[string][]observation{}
structures:
	for _, st := range shape.ServerStructures() {
		key := tokenizer.Structure(st)
		for _, m := range c.out.Models {
			for i, n := range calibrationLengths {
				msgs, content := sample(synth, st, n, uint64(i+1)*0x5eed, []string{one, other}[i%2])
				got, err := c.messages(ctx, m, msgs)
				var ce *CalibrationError
				if errors.As(err, &ce) && ce.Refused == key && !c.needed[key] {
					delete(obs, key) // the run sends none: left out
					continue structures
				}
				if err != nil {
					return err
				}
				o := observation{model: m, n: n, over: got - content}
				for _, msg := range msgs {
					o.lead += leads.Lead(msg.Content)
				}
				obs[key] = append(obs[key], o)
			}
		}
	}
	return c.settle(obs)
}

// leadWords are a word one token bare and one that is not ("" when
// every kept word is, or none is).
func (c *calibration) leadWords() (one, other string) {
	for i, w := range c.out.Words {
		switch {
		case c.out.Bare[i] == 1 && one == "":
			one = w
		case c.out.Bare[i] != 1 && other == "":
			other = w
		}
	}
	return one, other
}

// settle reads the observations: the overheads with the space kept if
// they are constant, else with the template trimming, else an error
// naming the model.
func (c *calibration) settle(obs map[string][]observation) error {
	for _, trims := range []bool{false, true} {
		over, err := constant(obs, trims)
		if err == nil {
			c.out.Overhead, c.out.Trims, c.out.Lengths = over, trims, calibrationLengths
			return nil
		}
		if trims {
			return err
		}
	}
	return nil
}

// constant is the overhead per structure under one reading, or the
// error that names the first observation that breaks it.
func constant(obs map[string][]observation, trims bool) (map[string]int, error) {
	out := map[string]int{}
	for key, os := range obs {
		val := func(o observation) int {
			if trims {
				return o.over - o.lead
			}
			return o.over
		}
		first := os[0]
		for _, o := range os[1:] {
			switch {
			case val(o) != val(first) && o.model == first.model:
				return nil, &CalibrationError{Model: o.model, Reason: fmt.Sprintf("its chat template adds %d tokens to a %s prompt of %d tokens but %d to one of %d: not a constant, so no offset is exact",
					val(first), key, first.n, val(o), o.n)}
			case val(o) != val(first):
				return nil, &CalibrationError{Model: o.model, Reason: fmt.Sprintf("its chat template adds %d tokens to a %s prompt where model %s's adds %d; calibrate them in separate runs", val(o), key, first.model, val(first))}
			}
		}
		out[key] = val(first)
	}
	return out, nil
}

// verify fits fresh prompts (other seeds and lengths) with the
// calibration and has the server count them: each must be exactly the
// predicted count, and a long window of the text exactly its length.
func (c *calibration) verify(ctx context.Context) error {
	synth, err := shape.NewSynth(tokenizer.NewCalibrated(c.out))
	if err != nil {
		return &CalibrationError{Model: c.out.Models[0], Reason: err.Error()}
	}
	for _, m := range c.out.Models {
		base, err := c.prompt(ctx, m, "")
		if err != nil {
			return err
		}
		window := synth.Prompt(0x7e51f1ed, 4096)
		if n, err := c.prompt(ctx, m, window); err != nil {
			return err
		} else if n-base != 4096 {
			return &CalibrationError{Model: m, Reason: fmt.Sprintf("a window of 4096 calibrated words counts %d tokens (a word merges with its neighbour)", n-base)}
		}
		for _, st := range shape.ServerStructures() {
			if _, ok := c.out.Overhead[tokenizer.Structure(st)]; !ok {
				continue
			}
			for i, n := range verifyLengths {
				if err := c.verifyOne(ctx, synth, m, st, n+systemTokens*(len(st)-1), uint64(i+1)*0xc0ffee); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// verifyOne fits one prompt of structure st to n tokens and checks the
// server's count of it.
func (c *calibration) verifyOne(ctx context.Context, synth *shape.Synth, model string, st []string, n int, seed uint64) error {
	msgs, _ := sample(synth, st, 1, seed, "")
	want, _, err := synth.FitChat(msgs, n, seed)
	if err != nil {
		return &CalibrationError{Model: model, Reason: err.Error()}
	}
	got, err := c.messages(ctx, model, msgs)
	if err != nil {
		return err
	}
	if got != want {
		return &CalibrationError{Model: model, Reason: fmt.Sprintf("a fresh %s prompt fitted to %d tokens counts %d on the server", tokenizer.Structure(st), want, got)}
	}
	c.out.Verified++
	return nil
}
