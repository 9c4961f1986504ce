package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sagebench/sagebench/internal/run"
	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
)

// calibrateServer is the setup phase of tokenizer: server: before the
// load, the target (the embedded stack started for it with the run's
// stack, or the URL) is asked through POST /tokenize how it counts the
// prompts sagebench synthesizes (target.Calibrate, bounded in requests
// and time), and r then synthesizes and counts with that. A target
// without /tokenize, or whose count cannot be predicted exactly, is a
// usage error naming the model; nothing is written.
func calibrateServer(ctx context.Context, rn *run.Runner, r runconfig.Resolved, out io.Writer) (runconfig.Resolved, error) {
	if r.Shared.Tokenizer != tokenizer.ServerSpec {
		return r, nil
	}
	models := workload.ChatModels(r.Workload)
	if len(models) == 0 {
		return r, usageErrorf("%s: tokenizer: server: the run sends no chat request to count; remove tokenizer: server", r.Spec.ID)
	}
	opts := target.Options{Start: rn.Start, Seed: r.Shared.Seed, Models: workload.Models(r.Workload), Tokenizer: r.Tokenizer}
	if sd, ok := r.Workload.(workload.StackDefaults); ok {
		opts.StackYAML = sd.StackYAML()
	}
	fmt.Fprintf(out, "%s: setup: tokenizer: server: calibrating against the target's POST /tokenize (models %s; at most %v and %d requests)\n",
		r.Spec.ID, strings.Join(slices.Compact(slices.Sorted(slices.Values(models))), ", "), target.CalibrationTimeout, target.CalibrationRequests)
	t, err := target.Open(ctx, r.Shared.Target, opts)
	if err != nil {
		return r, withCode(ExitError, err)
	}
	defer t.Close(context.WithoutCancel(ctx))
	cal, err := t.Calibrate(ctx, models, runconfig.ServerStructures(r.Workload.Config())...)
	if err != nil {
		return r, calibrationErr(r.Spec.ID, t.Redactor().String(err.Error()), err)
	}
	if texts := runconfig.ServerPrompts(r.Workload.Config()); len(texts) > 0 {
		fmt.Fprintf(out, "%s: setup: tokenizer: server: counting the dataset's prompts with the target (at most %d distinct, %v)\n", r.Spec.ID, target.MaxServerTexts, target.TextsTimeout)
		if cal, err = t.CountTexts(ctx, cal, texts); err != nil {
			return r, calibrationErr(r.Spec.ID, t.Redactor().String(err.Error()), err)
		}
	}
	c := cal.Calibration()
	fmt.Fprintf(out, "%s: setup: tokenizer: server: %d words are one token each (%d dropped), template tokens %v%s, %d fresh prompts counted as predicted, %d dataset prompts counted; %d calibration requests\n",
		r.Spec.ID, len(c.Words), len(c.Dropped), c.Overhead, map[bool]string{true: " (messages trimmed)"}[c.Trims], c.Verified, c.Texts, c.Requests)
	return r.WithCalibration(cal)
}

// calibrationErr maps a calibration failure to its exit code: a target
// that cannot serve tokenizer: server is bad input (2), anything else
// (a transport error, a deadline) a tool error (1).
func calibrationErr(id, msg string, err error) error {
	var nt *target.NoTokenizeError
	var ce *target.CalibrationError
	var tm *target.TooManyTextsError
	if errors.As(err, &nt) || errors.As(err, &ce) || errors.As(err, &tm) {
		return usageErrorf("%s: %s", id, msg)
	}
	return withCode(ExitError, fmt.Errorf("%s: %s", id, msg))
}

// warnMisses says on stderr when, with tokenizer: server, some text was
// counted that the calibration does not cover (a path the mode does not
// refuse but cannot count: its input_tokens are not the server's).
func warnMisses(r runconfig.Resolved, stderr io.Writer) {
	if r.Shared.Tokenizer != tokenizer.ServerSpec {
		return
	}
	tok, err := r.Tokenizer.Get()
	if cal, ok := tok.(*tokenizer.Calibrated); err == nil && ok && cal.Misses() > 0 {
		fmt.Fprintf(stderr, "sagebench: warning: %s: tokenizer: server: %d texts were not synthesized or counted by the target and were counted in %s instead; those requests' input_tokens are not the server's\n",
			r.Spec.ID, cal.Misses(), tokenizer.DefaultName)
	}
}
