package runconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/traffic"
)

// validateTokenizer checks tokenizer: a spec tokenizer.Load takes, or
// "server", which counts the target's way and so takes no chat template
// of its own and no nodes that rebuild the tokenizer from its spec.
func (s Shared) validateTokenizer() error {
	if s.Tokenizer != tokenizer.ServerSpec {
		if err := tokenizer.Validate(s.Tokenizer); err != nil {
			return fmt.Errorf("tokenizer: %w", err)
		}
		return nil
	}
	switch {
	case s.ChatTemplate != "":
		return errors.New("chat_template: with tokenizer: server the target's own chat template is measured; remove chat_template (or give tokenizer: the model's tokenizer.json instead of server)")
	case s.Nodes > 1 || s.NATSURL != "":
		return errors.New("tokenizer: server does not run with --nodes yet (the nodes build their tokenizer from its spec); give tokenizer: the model's tokenizer.json, or run on one node")
	case s.Backend == BackendRay:
		return errors.New("tokenizer: server does not run on --backend ray; give tokenizer: the model's tokenizer.json")
	}
	return nil
}

// ServerTokenizerUnsupported names a key of the workload's config that
// tokenizer: server cannot count exactly (nil when there is none):
// sessions (the server's answers come back into the conversation) — and
// Q1, whose prompt is the passages retrieval returns. (A prompt
// dataset's prompts are counted by the target before the load.)
func ServerTokenizerUnsupported(section string, cfg any) error {
	if section == "q1" {
		return errors.New("tokenizer: server: Q1's prompt is the retrieved passages' text, which only the server can count; give tokenizer: the model's tokenizer.json and chat_template")
	}
	var err error
	walkShapes(reflect.ValueOf(cfg), section, 0, func(key string, s *traffic.LLMShape) {
		switch {
		case err != nil:
		case s.Sessions != nil:
			err = fmt.Errorf("%s.sessions: tokenizer: server cannot count a session's turns (the server's answers come back into the conversation); remove sessions or give tokenizer: the model's tokenizer.json", key)
		case s.Source != nil && s.Source.Sessions:
			err = fmt.Errorf("%s.source.sessions: tokenizer: server cannot count a session's turns (the server's answers come back into the conversation); remove sessions or give tokenizer: the model's tokenizer.json", key)
		}
	})
	return err
}

// ServerStructures are the message structures the workload's chat
// requests take (roles in order): a user prompt, and after a system
// prompt when a shape shares prefixes.
func ServerStructures(cfg any) [][]string {
	out := [][]string{{"user"}}
	// (the calibration tries every structure; one the run sends must pass)
	prefixed := false
	walkShapes(reflect.ValueOf(cfg), "", 0, func(_ string, s *traffic.LLMShape) { prefixed = prefixed || s.Prefix != nil })
	if prefixed {
		out = append(out, []string{"system", "user"})
	}
	return out
}

// ServerPrompts are the prompts of the workload's datasets (each shape's
// first turns; nil without a dataset): with tokenizer: server the target
// counts each once before the load (target.CountTexts).
func ServerPrompts(cfg any) []string {
	var out []string
	walkShapes(reflect.ValueOf(cfg), "", 0, func(_ string, s *traffic.LLMShape) {
		if s.Source != nil {
			out = append(out, s.Drawer().Prompts()...)
		}
	})
	return out
}

var llmShapeType = reflect.TypeFor[traffic.LLMShape]()

// walkShapes calls fn on every LLMShape reachable from v (a Q's config)
// with its config key.
func walkShapes(v reflect.Value, key string, depth int, fn func(string, *traffic.LLMShape)) {
	if depth > 16 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkShapes(v.Elem(), key, depth+1, fn)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkShapes(v.Index(i), fmt.Sprintf("%s[%d]", key, i), depth+1, fn)
		}
	case reflect.Struct:
		if v.Type() == llmShapeType && v.CanAddr() {
			fn(key, v.Addr().Interface().(*traffic.LLMShape))
			return
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				walkShapes(v.Field(i), key+"."+yamlName(f), depth+1, fn)
			}
		}
	}
}

// yamlName is a field's YAML key.
func yamlName(f reflect.StructField) string {
	name := f.Tag.Get("yaml")
	for i := range len(name) {
		if name[i] == ',' {
			name = name[:i]
			break
		}
	}
	if name == "" || name == "-" {
		return f.Name
	}
	return name
}

// WithCalibration is r counting in cal, the target's calibrated count:
// its Tokenizer is cal's Ref (the runner synthesizes and counts with it)
// and its RunConfig records the calibration as tokenizer_calibration
// (not a config key: the YAML and the hashes stay the run's).
func (r Resolved) WithCalibration(cal *tokenizer.Calibrated) (Resolved, error) {
	if r.Shared.Tokenizer != tokenizer.ServerSpec {
		return r, fmt.Errorf("tokenizer %q: a calibration is for tokenizer: server", r.Shared.Tokenizer)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.RunConfig, &m); err != nil {
		return r, fmt.Errorf("recording the calibration: %w", err)
	}
	c, err := json.Marshal(cal.Calibration())
	if err != nil {
		return r, fmt.Errorf("recording the calibration: %w", err)
	}
	m["tokenizer_calibration"] = c
	if r.RunConfig, err = canonicalJSON(m); err != nil {
		return r, err
	}
	r.Tokenizer = tokenizer.ServerRef(cal)
	return r, nil
}
