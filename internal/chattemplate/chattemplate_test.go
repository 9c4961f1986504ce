package chattemplate

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/tokenizer"
)

// templates are the chat templates of testdata/templates, each with a
// tokenizer gen.py trained and the 100 conversations it rendered and
// tokenized with transformers' apply_chat_template (golden.jsonl).
var templates = []string{"llama3", "qwen2.5", "mistral", "gemma", "gemma3"}

type golden struct {
	Messages []Message `json:"messages"`
	IDs      []int     `json:"ids"`
	Text     string    `json:"text"`
}

// TestTemplatesMatchTransformers: for Llama 3.1, Qwen 2.5, Mistral v0.3,
// Gemma and Gemma 3 templates, 100 conversations each (half with a
// system prompt where the template takes one, 1–3 user turns, trailing
// blanks that `trim` removes) render to transformers' text and tokenize
// to its IDs: len is what a server reports as prompt_tokens.
func TestTemplatesMatchTransformers(t *testing.T) {
	for _, name := range templates {
		t.Run(name, func(t *testing.T) {
			tpl, tok := loadPair(t, name)
			cases := readGolden(t, name)
			if len(cases) != 100 {
				t.Fatalf("%d golden conversations, want 100", len(cases))
			}
			withSystem := 0
			for i, c := range cases {
				text, err := tpl.Render(c.Messages, true)
				if err != nil {
					t.Fatalf("conversation %d: %v", i, err)
				}
				if text != c.Text {
					t.Fatalf("conversation %d renders\n%q\nwant\n%q", i, text, c.Text)
				}
				if ids := tok.Encode(text); !slices.Equal(ids, c.IDs) {
					t.Fatalf("conversation %d: %d tokens %v, want %d %v", i, len(ids), ids, len(c.IDs), c.IDs)
				}
				if c.Messages[0].Role == "system" {
					withSystem++
				}
			}
			t.Logf("%s: 100 conversations (%d with a system prompt) equal transformers' apply_chat_template", name, withSystem)
		})
	}
}

func TestRaiseException(t *testing.T) {
	tpl, _ := loadPair(t, "gemma")
	_, err := tpl.Render([]Message{{Role: "system", Content: "x"}, {Role: "user", Content: "y"}}, true)
	var r *RaiseError
	if !errors.As(err, &r) || r.Msg != "System role not supported" {
		t.Fatalf("Render with a system message: %v, want the template's raise_exception", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ name, path string }{
		{"no template", write("a.json", `{"bos_token":"<s>"}`)},
		{"bad jinja", write("b.jinja", `{% for m in messages %}`)},
		{"include", write("c.jinja", `{% include "/etc/passwd" %}`)},
		{"missing", filepath.Join(dir, "none.json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl, err := Load(tc.path)
			if err == nil {
				_, err = tpl.Render([]Message{{Role: "user", Content: "hi"}}, true)
			}
			if err == nil {
				t.Fatalf("Load(%s): no error", tc.path)
			}
		})
	}
}

func TestStrftimeNow(t *testing.T) {
	tpl, err := Parse("t", `{{ strftime_now("%d %b %Y") }}`, Options{Now: func() time.Time { return time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tpl.Render(nil, false); got != "06 Dec 2026" {
		t.Fatalf("strftime_now: %q", got)
	}
}

func loadPair(t *testing.T, name string) (*Template, tokenizer.Tokenizer) {
	t.Helper()
	tpl, err := Load(filepath.Join("testdata", name+".tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(filepath.Join("testdata", name+".tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl, tok
}

func readGolden(t *testing.T, name string) []golden {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []golden
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var g golden
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// TestTemplatesLive: the golden conversations rendered and tokenized by
// transformers itself now (gen.py chat), against this package: the
// goldens are not stale. It needs the virtualenv of testdata/parity/gen.py
// (SAGEBENCH_TOK_VENV) and skips without it unless
// SAGEBENCH_REQUIRE_TOKENIZERS=1.
func TestTemplatesLive(t *testing.T) {
	dir := os.Getenv("SAGEBENCH_TOK_VENV")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "sagebench", "tok-venv")
	}
	py := filepath.Join(dir, "bin", "python")
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("SAGEBENCH_REQUIRE_TOKENIZERS") == "1" {
			t.Fatalf("SAGEBENCH_REQUIRE_TOKENIZERS=1 but %s is missing", py)
		}
		t.Skipf("no virtualenv with transformers at %s", dir)
	}
	script := filepath.Join("..", "tokenizer", "testdata", "parity", "gen.py")
	for _, name := range templates {
		t.Run(name, func(t *testing.T) {
			tpl, tok := loadPair(t, name)
			cases := readGolden(t, name)
			var in strings.Builder
			for _, c := range cases {
				b, _ := json.Marshal(map[string]any{"messages": c.Messages})
				in.Write(append(b, '\n'))
			}
			cmd := exec.Command(py, script, "chat", name)
			cmd.Stdin = strings.NewReader(in.String())
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("gen.py chat %s: %v", name, err)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != len(cases) {
				t.Fatalf("%d answers for %d conversations", len(lines), len(cases))
			}
			for i, l := range lines {
				var want golden
				if err := json.Unmarshal([]byte(l), &want); err != nil {
					t.Fatal(err)
				}
				text, err := tpl.Render(cases[i].Messages, true)
				if err != nil || text != want.Text || !slices.Equal(tok.Encode(text), want.IDs) {
					t.Fatalf("conversation %d: %v\n got %q\nwant %q", i, err, text, want.Text)
				}
			}
		})
	}
}

// TestRenderBounded: a template that would print without end stops at
// the bound with an error.
func TestRenderBounded(t *testing.T) {
	tpl, err := Parse("loop", `{% for i in range(1000000) %}{{ "0123456789" * 100 }}{% endfor %}`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.Render(nil, true); err == nil || !strings.Contains(err.Error(), "passes") {
		t.Fatalf("Render: %v, want the bound", err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"chat_template": "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}", "bos_token": "<s>"}`))
	f.Add([]byte(`{"chat_template": [{"name": "default", "template": "{{ raise_exception('no') }}"}], "eos_token": {"content": "</s>"}}`))
	f.Add([]byte(`{"chat_template": "{% set ns = namespace(a=1) %}{% set ns.a = ns.a + 1 %}{{ ns.a }}"}`))
	f.Add([]byte(`{"chat_template": "{% for m in messages %}{{ '<t>' + m.role + (m.content if loop.first else '') }}{% endfor %}{% set x = 1 + (2 if y else 3) %}"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tpl, err := ParseConfig("fuzz.json", b)
		if err != nil {
			return
		}
		_, _ = tpl.Render([]Message{{Role: "user", Content: "hi"}}, true)
	})
}

// TestChatBOSCountedOnce: the Llama 3 fixture's tokenizer.json has Llama
// 3's post-processor (ByteLevel + TemplateProcessing adding
// <|begin_of_text|>), and its template writes <|begin_of_text|> too.
// transformers' apply_chat_template(tokenize=True) tokenizes the rendered
// prompt with add_special_tokens=False, so its IDs (the goldens) hold one
// BOS: a chat prompt is counted with Count, not CountWithSpecialTokens,
// which would count it twice.
func TestChatBOSCountedOnce(t *testing.T) {
	tpl, tok := loadPair(t, "llama3")
	const bos = 3000 // <|begin_of_text|>
	for i, c := range readGolden(t, "llama3") {
		text, err := tpl.Render(c.Messages, true)
		if err != nil {
			t.Fatal(err)
		}
		if n := tok.Count(text); n != len(c.IDs) || c.IDs[0] != bos || slices.Contains(c.IDs[1:], bos) {
			t.Fatalf("conversation %d: Count %d, transformers %d IDs starting %v: want one BOS, counted once", i, n, len(c.IDs), c.IDs[:2])
		}
		if n := tokenizer.CountWithSpecialTokens(tok, text); n != len(c.IDs)+1 {
			t.Fatalf("conversation %d: CountWithSpecialTokens %d, want the post-processor's BOS on top of %d", i, n, len(c.IDs))
		}
	}
}
