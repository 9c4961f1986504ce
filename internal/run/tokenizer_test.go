package run

import (
	"context"
	"io"
	"sync"
	"testing"

	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
)

// TestRepetitionsShareTheTokenizer: every repetition's embedded stack
// loads the run's tokenizer through the resolved Ref — the tokenizer
// the prompts are synthesized with — instead of parsing it again.
func TestRepetitionsShareTheTokenizer(t *testing.T) {
	var mu sync.Mutex
	var given []*tokenizer.Ref
	embedded := target.EmbeddedStack(nil)
	start := func(ctx context.Context, spec target.StackSpec) (string, func(context.Context) error, error) {
		mu.Lock()
		given = append(given, spec.Tokenizer)
		mu.Unlock()
		return embedded(ctx, spec)
	}
	shared := runconfig.DefaultShared()
	shared.OutputDir, shared.Repeat, shared.Tokenizer = t.TempDir(), 2, tokenizer.O200K
	ref := tokenizer.NewRef(tokenizer.O200K)
	r := runconfig.Resolved{Spec: workload.Spec{ID: "Q1"}, Workload: failingWorkload{}, Shared: shared, Tokenizer: ref}
	rn := &Runner{Out: io.Discard, Start: start}
	if _, err := rn.Run(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	s, err := rn.synth(ref)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(given) != 2 || given[0] != ref || given[1] != ref {
		t.Fatalf("the stacks were given %v, want the resolved %p once per repetition", given, ref)
	}
	loaded, err := ref.Loader()(tokenizer.O200K)
	if err != nil || loaded != s.Tokenizer() {
		t.Errorf("the stack's loader returns %v (%v), want the prompts' tokenizer", loaded, err)
	}
}

// named is a tokenizer no loader would return by itself.
type named struct{ tokenizer.Tokenizer }

// TestRunnerUsesTheResolvedTokenizer: the runner synthesizes prompts with
// the tokenizer the resolved configuration loaded (a prompt dataset was
// measured with it), not a second copy of the same file.
func TestRunnerUsesTheResolvedTokenizer(t *testing.T) {
	o200k, err := tokenizer.Load(tokenizer.O200K)
	if err != nil {
		t.Fatal(err)
	}
	mine := named{o200k}
	shared := runconfig.DefaultShared()
	shared.OutputDir, shared.Tokenizer = t.TempDir(), tokenizer.O200K
	r := runconfig.Resolved{Spec: workload.Spec{ID: "Q1"}, Workload: failingWorkload{}, Shared: shared,
		Tokenizer: tokenizer.RefOf(tokenizer.O200K, mine)}
	rn := &Runner{Out: io.Discard, Start: target.EmbeddedStack(nil)}
	if _, err := rn.Run(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if got := rn.prompts(r).Tokenizer(); got != tokenizer.Tokenizer(mine) {
		t.Errorf("prompts are synthesized with %T, want the resolved configuration's tokenizer", got)
	}
}
