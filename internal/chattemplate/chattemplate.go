package chattemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

// Message is one chat message: a role and its text.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Messages converts messages of a type with Message's fields (an
// openai.Message) into Messages.
func Messages[M ~struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}](ms []M) []Message {
	out := make([]Message, len(ms))
	for i, m := range ms {
		out[i] = Message(m)
	}
	return out
}

// Template is a parsed chat template with the special tokens it may
// print (bos_token, eos_token). It is safe for concurrent use.
type Template struct {
	name     string
	tpl      *exec.Template
	bos, eos string
	now      func() time.Time
	src      string
}

// Options are what a template sees besides the messages.
type Options struct {
	// BOS and EOS are bos_token and eos_token.
	BOS, EOS string
	// Now is strftime_now's clock (default time.Now).
	Now func() time.Time
}

// maxConfigBytes bounds a tokenizer_config.json or template file (real
// ones are under 200 kB; Llama 3's chat template is 4 kB).
const maxConfigBytes = 8 << 20

// Parse compiles a Jinja chat template; name labels it in errors. A
// panic of gonja's lexer or parser on a malformed template is an error
// too (FuzzParseConfig).
func Parse(name, source string, o Options) (t *Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("chat template %s: the parser failed: %v", name, r)
		}
	}()
	if d := bracketDepth(source); d > maxBracketDepth {
		return nil, fmt.Errorf("chat template %s: brackets nest %d deep; at most %d (gonja's parser recurses per bracket)", name, d, maxBracketDepth)
	}
	tpl, err := compile(source)
	if err != nil {
		if lifted := liftInlineIfs(source); lifted != source { // Gemma 3's (a if c else b): inlineif.go
			if t2, err2 := compile(lifted); err2 == nil {
				tpl, err = t2, nil
			}
		}
	}
	if err != nil {
		msg := err.Error() // gonja quotes the whole source: keep the reason
		if i := strings.LastIndex(msg, "': "); i >= 0 {
			msg = msg[i+3:]
		}
		return nil, fmt.Errorf("chat template %s: %s", name, msg)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Template{name: name, tpl: tpl, bos: o.BOS, eos: o.EOS, now: o.Now, src: source}, nil
}

// maxBracketDepth bounds how deep "(" and "[" nest in a template: gonja's
// parser descends ~14 calls per bracket, and a stack overflow is fatal
// (no recover); real templates nest a few deep.
const maxBracketDepth = 256

// bracketDepth is the deepest nesting of "(" and "[" in source (text and
// tags alike: an upper bound of what the parser meets).
func bracketDepth(source string) int {
	d, deepest := 0, 0
	for i := 0; i < len(source); i++ {
		switch source[i] {
		case '(', '[':
			d++
			deepest = max(deepest, d)
		case ')', ']':
			d = max(d-1, 0)
		}
	}
	return deepest
}

// compile parses source with transformers' settings (trim_blocks,
// lstrip_blocks) and globals.
func compile(source string) (*exec.Template, error) {
	cfg := config.New()
	cfg.TrimBlocks, cfg.LeftStripBlocks = true, true
	root := "chat_template"
	return exec.NewTemplate(root, cfg, oneFile{root, source}, environment())
}

// Source is a template in a form that travels (the plan a load node of
// --nodes renders with): its name, Jinja source and special tokens.
type Source struct {
	Name  string `json:"name"`
	Jinja string `json:"jinja"`
	BOS   string `json:"bos_token,omitempty"`
	EOS   string `json:"eos_token,omitempty"`
}

// Source returns what Parse needs to make t again.
func (t *Template) Source() *Source {
	return &Source{Name: t.name, Jinja: t.src, BOS: t.bos, EOS: t.eos}
}

// Parse compiles s (its source bounded as a file's is).
func (s *Source) Parse() (*Template, error) {
	if len(s.Jinja) > maxConfigBytes {
		return nil, fmt.Errorf("chat template %s: larger than %d bytes", s.Name, maxConfigBytes)
	}
	return Parse(s.Name, s.Jinja, Options{BOS: s.BOS, EOS: s.EOS})
}

// Name is the file (or label) the template came from.
func (t *Template) Name() string { return t.name }

// Render is the prompt text of msgs; with generationPrompt the template
// appends the assistant turn's header (add_generation_prompt), as a
// server does for a chat completion.
func (t *Template) Render(msgs []Message, generationPrompt bool) (string, error) {
	list := make([]any, len(msgs))
	for i, m := range msgs {
		list[i] = map[string]any{"role": m.Role, "content": m.Content}
	}
	ctx := exec.NewContext(map[string]any{
		"messages":              list,
		"add_generation_prompt": generationPrompt,
		"bos_token":             t.bos,
		"eos_token":             t.eos,
		"raise_exception":       raiseException,
		"strftime_now":          func(format string) string { return strftime(t.now(), format) },
	})
	return t.execute(ctx)
}

// execute renders into a bounded builder; gonja goes on after a failed
// write, so passing the bound panics, and the panic is the error here —
// as is any panic of gonja's on a template from a file (`1 % 0` divides
// by zero: FuzzParseConfig).
func (t *Template) execute(ctx *exec.Context) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			if tooLong, ok := r.(errTooLong); ok {
				text, err = "", fmt.Errorf("chat template %s: %w", t.name, tooLong)
				return
			}
			text, err = "", fmt.Errorf("chat template %s: the renderer failed: %v", t.name, r)
		}
	}()
	var out boundedBuilder
	if err := t.tpl.Execute(&out, ctx); err != nil {
		return "", fmt.Errorf("chat template %s: %w", t.name, unwrapRaise(err))
	}
	return out.String(), nil
}

// maxRendered bounds a rendered prompt: a template from a file could
// loop without end (a 128k-token prompt is about 0.5 MB).
const maxRendered = 8 << 20

// boundedBuilder is a strings.Builder that refuses to grow past
// maxRendered, which stops the template's rendering.
type boundedBuilder struct{ strings.Builder }

func (b *boundedBuilder) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxRendered {
		panic(errTooLong{})
	}
	return b.Builder.Write(p)
}

func (b *boundedBuilder) WriteString(s string) (int, error) { return b.Write([]byte(s)) }

type errTooLong struct{}

func (errTooLong) Error() string {
	return fmt.Sprintf("the rendered prompt passes %d bytes", maxRendered)
}

// RaiseError is a template's raise_exception: the messages are not what
// the model accepts (a system role Gemma has not, roles not alternating).
type RaiseError struct{ Msg string }

func (e *RaiseError) Error() string { return "the template refuses the messages: " + e.Msg }

func raiseException(msg string) (string, error) { return "", &RaiseError{Msg: msg} }

func unwrapRaise(err error) error {
	var r *RaiseError
	if errors.As(err, &r) {
		return r
	}
	if i := strings.Index(err.Error(), "the template refuses the messages: "); i >= 0 {
		return &RaiseError{Msg: strings.TrimPrefix(err.Error()[i:], "the template refuses the messages: ")}
	}
	return err
}

func environment() *exec.Environment {
	return &exec.Environment{
		Context:           exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables),
		Filters:           builtins.Filters,
		Tests:             builtins.Tests,
		ControlStructures: builtins.ControlStructures,
		Methods:           builtins.Methods,
	}
}

// oneFile is a loader of the template alone: include, import and extend
// find nothing (a template from a file never reads another).
type oneFile struct{ name, source string }

func (f oneFile) Read(path string) (io.Reader, error) {
	if path != f.name {
		return nil, fmt.Errorf("%q: a chat template cannot include other files", path)
	}
	return strings.NewReader(f.source), nil
}
func (f oneFile) Resolve(path string) (string, error)    { return path, nil }
func (f oneFile) Inherit(string) (loaders.Loader, error) { return f, nil }

// Load reads a chat template: a tokenizer_config.json (its chat_template,
// bos_token and eos_token) or a Jinja file (.jinja, .j2: the template
// alone, no special tokens).
func Load(path string) (*Template, error) {
	b, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(path)
	if strings.HasSuffix(path, ".json") {
		return ParseConfig(name, b)
	}
	return Parse(name, string(b), Options{})
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("chat template: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("chat template %s: %w", path, err)
	}
	if len(b) > maxConfigBytes {
		return nil, fmt.Errorf("chat template %s: larger than %d bytes", path, maxConfigBytes)
	}
	return b, nil
}

// ParseConfig reads the chat template of a tokenizer_config.json: a
// string, or a list of {name, template} whose "default" is taken.
func ParseConfig(name string, b []byte) (*Template, error) {
	var c struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("chat template %s: decoding tokenizer_config.json: %w", name, err)
	}
	src, err := templateSource(c.ChatTemplate)
	if err != nil {
		return nil, fmt.Errorf("chat template %s: %w", name, err)
	}
	return Parse(name, src, Options{BOS: tokenContent(c.BOS), EOS: tokenContent(c.EOS)})
}

func templateSource(raw json.RawMessage) (string, error) {
	var s string
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New("no chat_template (give the template as a .jinja file)")
	}
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var named []struct{ Name, Template string }
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", fmt.Errorf("chat_template: want a string or [{name, template}]: %w", err)
	}
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
	}
	return "", errors.New(`chat_template: no template named "default"`)
}

// tokenContent is a special token given as a string or as an AddedToken
// object {"content": …}.
func tokenContent(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var t struct{ Content string }
	_ = json.Unmarshal(raw, &t)
	return t.Content
}
