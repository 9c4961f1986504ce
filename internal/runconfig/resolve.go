package runconfig

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"

	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/traffic"
	"github.com/sagebench/sagebench/internal/workload"
)

// ErrNotImplemented is returned by Resolve for a Q this build lists but
// cannot run.
var ErrNotImplemented = errors.New("not implemented in this build yet")

// Resolved is one experiment ready to run: its workload with the
// effective configuration frozen.
type Resolved struct {
	Spec     workload.Spec
	Workload workload.Workload
	Shared   Shared
	// YAML is the effective configuration as a config file (shared keys
	// and the qN section); feeding it back with --config reproduces the run.
	YAML []byte
	// RunConfig is the canonical JSON of the effective configuration plus
	// "experiment"; it goes into run.json.
	RunConfig json.RawMessage
	// ConfigHash is the sha256 of RunConfig's canonical JSON without
	// output_dir and repeat, which do not change what a repetition measures.
	ConfigHash string
	// WorkloadHash is ConfigHash without the backend (backend and ray
	// keys): the sage and ray runs of one workload, seed and config share
	// it, so aggregates can put them side by side.
	WorkloadHash string
	// Tokenizer is Shared.Tokenizer resolved: the one value in which the
	// run's tokenizer travels — the Q's prompt datasets are measured in it,
	// the runner synthesizes prompts and the embedded stack counts with it.
	Tokenizer *tokenizer.Ref
	// EmbeddingTokenizer is Shared.EmbeddingTokenizer resolved (nil when
	// unset): embedding requests' inputs are counted in it.
	EmbeddingTokenizer *tokenizer.Ref
}

// Resolve is ResolveIn with a Ref of its own for shared.Tokenizer.
func Resolve(spec workload.Spec, shared Shared, f *File, o workload.Overrides) (r Resolved, ignored []string, err error) {
	return ResolveIn(spec, shared, f, o, tokenizer.RefFor(shared.Tokenizer))
}

// ResolveIn builds the workload of spec at shared's scale, decodes its
// section of f (may be nil) strictly, gives its LLM shapes the run's
// tokenizer tok (shared.Tokenizer's Ref: a command that resolves several
// Qs hands one to all of them, so a tokenizer.json is parsed once),
// applies the flag overrides, validates everything and freezes the
// effective configuration. ignored lists the override flags that do not
// apply to this Q.
func ResolveIn(spec workload.Spec, shared Shared, f *File, o workload.Overrides, tok *tokenizer.Ref) (r Resolved, ignored []string, err error) {
	if tok.Spec() != shared.Tokenizer {
		return r, nil, fmt.Errorf("tokenizer %q: resolved as %q", shared.Tokenizer, tok.Spec())
	}
	if !spec.Implemented() {
		return r, nil, ErrNotImplemented
	}
	if err := shared.Validate(); err != nil {
		return r, nil, err
	}
	if (shared.Nodes > 1 || shared.NATSURL != "") && !spec.Distributed && !spec.ShardedLoad {
		return r, nil, fmt.Errorf("nodes %d: %s runs on one node (its load is one open-loop driver that cannot be sharded); --nodes and nats_url apply to Q1 (operators on the workers) and Q3, Q4, Q6 (load sent from the workers)", shared.Nodes, spec.ID)
	}
	wl := spec.New(shared.Quick)
	if err := f.Decode(spec, wl.Config()); err != nil {
		return r, nil, err
	}
	if shared.Tokenizer != tokenizer.ServerSpec { // server: a dataset is measured in the default here; the target counts its prompts before the load
		traffic.UseTokenizer(wl.Config(), tok) // loaded only by a shape that reads a prompt dataset
	}
	ignored = wl.Config().Override(o)
	if err := wl.Config().Validate(); err != nil {
		return r, nil, err
	}
	if shared.Tokenizer == tokenizer.ServerSpec {
		if err := ServerTokenizerUnsupported(spec.Section(), wl.Config()); err != nil {
			return r, nil, err
		}
	}
	if err := checkPlan(wl.Config(), shared.Repeat); err != nil {
		return r, nil, err
	}
	if wl, err = onBackend(spec, shared, wl); err != nil {
		return r, nil, err
	}
	r = Resolved{Spec: spec, Workload: wl, Shared: shared, Tokenizer: tok}
	if shared.EmbeddingTokenizer != "" {
		r.EmbeddingTokenizer = tokenizer.NewRef(shared.EmbeddingTokenizer)
	}
	if err := r.freeze(); err != nil {
		return r, nil, err
	}
	return r, ignored, nil
}

// freeze renders YAML, RunConfig and ConfigHash.
func (r *Resolved) freeze() error {
	recorded := r.Shared
	if !recorded.Target.IsEmbedded() { // user info, query and fragment may hold credentials
		recorded.Target.URL = target.Describe(recorded.Target.URL)
	}
	if recorded.Ray.Address != "" {
		recorded.Ray.Address = target.Describe(recorded.Ray.Address)
	}
	shared, err := yaml.Marshal(recorded)
	if err != nil {
		return fmt.Errorf("encoding the effective config: %w", err)
	}
	section, err := yaml.Marshal(map[string]any{r.Spec.Section(): r.Workload.Config()})
	if err != nil {
		return fmt.Errorf("encoding the effective config: %w", err)
	}
	r.YAML = append(shared, section...)
	js, err := yaml.YAMLToJSON(r.YAML)
	if err != nil {
		return fmt.Errorf("encoding the effective config: %w", err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber() // keep 64-bit seeds exact
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("encoding the effective config: %w", err)
	}
	m["experiment"] = r.Spec.ID
	if r.RunConfig, err = canonicalJSON(m); err != nil {
		return err
	}
	delete(m, "output_dir")
	delete(m, "repeat")
	if sec, ok := m[r.Spec.Section()].(map[string]any); ok {
		delete(sec, "target") // a verdict's threshold: it changes no request
	}
	h, err := canonicalJSON(m)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(h)
	r.ConfigHash = hex.EncodeToString(sum[:])
	delete(m, "backend")
	delete(m, "ray")
	if h, err = canonicalJSON(m); err != nil {
		return err
	}
	sum = sha256.Sum256(h)
	r.WorkloadHash = hex.EncodeToString(sum[:])
	return nil
}

// onBackend returns the workload that runs on shared's backend: wl
// itself on sage, its Ray form on ray (a workload without one is a
// configuration error).
func onBackend(spec workload.Spec, shared Shared, wl workload.Workload) (workload.Workload, error) {
	if shared.Backend != BackendRay {
		return wl, nil
	}
	r, ok := wl.(workload.OnRay)
	if !ok {
		return nil, fmt.Errorf("backend ray: %s does not run on Ray in this build (Q1 does); use --backend sage", spec.ID)
	}
	return r.OnRay(shared.Ray), nil
}

// canonicalJSON encodes v with sorted keys and no insignificant space.
func canonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding the effective config: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
