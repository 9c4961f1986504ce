package target

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// Bounds of the tokenizer: server calibration (all models together).
const (
	CalibrationTimeout  = 30 * time.Second
	CalibrationRequests = 1500
	// calibrationChunk is how many candidate words one /tokenize counts
	// in running text.
	calibrationChunk = 32
	// systemTokens is the length of the system prompt of the
	// system+user structure's samples.
	systemTokens = 64
)

// calibrationLengths are the user-prompt lengths the template overhead is
// measured at; verifyLengths those of the fresh samples checked after.
var (
	calibrationLengths = []int{1, 17, 300, 2000}
	verifyLengths      = []int{5, 64, 700, 3000}
)

// CalibrationError says the target counts in a way tokenizer: server
// cannot predict exactly: the run is refused, naming the model.
type CalibrationError struct {
	Model  string
	Reason string
	// Refused, when set, is the message structure the target's
	// /tokenize refused ("system+user").
	Refused string
}

func (e *CalibrationError) Error() string {
	return fmt.Sprintf("tokenizer: server: model %s: %s; give the model's tokenizer.json (tokenizer:) and its tokenizer_config.json (chat_template:) instead", e.Model, e.Reason)
}

// calibration is one run of Calibrate: the target, a request budget.
type calibration struct {
	t    *Target
	mu   sync.Mutex // guards left and asked: bare counts go out concurrently
	left int
	out  tokenizer.Calibration
	// bareCount is each word's count without its leading space.
	bareCount map[string]int
	// asked are the models whose /tokenize counted a prompt.
	asked map[string]bool
	// needed are the message structures the run sends: one the target
	// refuses fails the calibration; another is left out.
	needed map[string]bool
}

// Calibrate learns from the target's POST /tokenize how it counts the
// prompts sagebench synthesizes, for every model of models (each once;
// all within CalibrationTimeout and CalibrationRequests): (a) the
// candidate words each model counts as exactly one token in running text
// (chunks of them counted; a chunk that miscounts is bisected and its
// offenders dropped) and each one's count alone without its space (what
// a template that trims a message counts of its first word), (b) the
// tokens the chat template adds to each
// message structure of shape.ServerStructures (one the target refuses
// is left out unless needed lists it) — the count of the messages
// minus their contents' tokens, which must be the same at every length
// and for every model, with the space kept or with the template trimming
// — and then (c) verifies fresh prompts fitted with
// the result: the server must count each exactly as predicted. The
// calibrated tokenizer is what the run synthesizes and counts with.
func (t *Target) Calibrate(ctx context.Context, models []string, needed ...[]string) (*tokenizer.Calibrated, error) {
	ctx, cancel := context.WithTimeout(ctx, CalibrationTimeout)
	defer cancel()
	c := &calibration{t: t, left: CalibrationRequests, needed: map[string]bool{"user": true}}
	for _, st := range needed {
		c.needed[tokenizer.Structure(st)] = true
	}
	for _, m := range models {
		if m != "" && !slices.Contains(c.out.Models, m) {
			c.out.Models = append(c.out.Models, m)
		}
	}
	if len(c.out.Models) == 0 {
		return nil, errors.New("tokenizer: server: the run asks for no chat model to calibrate")
	}
	if err := c.words(ctx); err != nil {
		return nil, err
	}
	synth, err := shape.NewSynth(tokenizer.NewCalibrated(c.out))
	if err != nil {
		return nil, &CalibrationError{Model: c.out.Models[0], Reason: err.Error()}
	}
	if err := c.overheads(ctx, synth); err != nil {
		return nil, err
	}
	if err := c.verify(ctx); err != nil {
		return nil, err
	}
	c.out.Requests = c.spent()
	return tokenizer.NewCalibrated(c.out), nil
}

// wrap names the setup phase in a transport error (a deadline says which
// bound was hit).
func (c *calibration) wrap(err error) error {
	var nt *NoTokenizeError
	if errors.As(err, &nt) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("tokenizer: server: the calibration took longer than %v (%d /tokenize requests so far): %w", CalibrationTimeout, c.spent(), err)
	}
	return fmt.Errorf("tokenizer: server calibration: %w", err)
}

// spent is how many requests the calibration has taken so far (the bare
// counts run concurrently: under the lock).
func (c *calibration) spent() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CalibrationRequests - c.left
}

// spend takes one request from the budget.
func (c *calibration) spend() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left == 0 {
		return fmt.Errorf("tokenizer: server: the calibration needs more than %d /tokenize requests", CalibrationRequests)
	}
	c.left--
	return nil
}

func (c *calibration) prompt(ctx context.Context, model, text string) (int, error) {
	if err := c.spend(); err != nil {
		return 0, err
	}
	n, err := c.t.CountPrompt(ctx, model, text)
	if err != nil {
		return 0, c.wrap(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.asked == nil {
		c.asked = map[string]bool{}
	}
	c.asked[model] = true
	return n, nil
}

func (c *calibration) messages(ctx context.Context, model string, msgs []chattemplate.Message) (int, error) {
	if err := c.spend(); err != nil {
		return 0, err
	}
	n, err := c.t.CountMessages(ctx, model, msgs)
	var nt *NoTokenizeError
	if errors.As(err, &nt) && c.counted(model) { // it counted prompts: it refuses these messages
		roles := make([]string, len(msgs))
		for i, m := range msgs {
			roles[i] = m.Role
		}
		return 0, &CalibrationError{Model: model, Refused: tokenizer.Structure(roles),
			Reason: fmt.Sprintf("its POST /tokenize refuses %s chat messages (%s): a /tokenize of prompts only, or a chat template that takes no such messages", tokenizer.Structure(roles), nt.Status)}
	}
	if err != nil {
		return 0, c.wrap(err)
	}
	return n, nil
}

// counted says model's /tokenize counted a prompt.
func (c *calibration) counted(model string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked[model]
}
