package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTokenizeChatCounts: `sagebench tokenize --count` over the Llama 3.1
// fixture's 100 conversations prints, line by line, the length of
// transformers' apply_chat_template IDs (chattemplate's golden file).
func TestTokenizeChatCounts(t *testing.T) {
	dir := filepath.Join("..", "chattemplate", "testdata")
	g, err := os.Open(filepath.Join(dir, "llama3.golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var input bytes.Buffer
	var want []string
	sc := bufio.NewScanner(g)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c struct {
			Messages json.RawMessage `json:"messages"`
			IDs      []int           `json:"ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		input.WriteString(`{"messages": ` + string(c.Messages) + "}\n")
		want = append(want, strconv.Itoa(len(c.IDs)))
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, input.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := tokenizeMain(t, "--tokenizer", filepath.Join(dir, "llama3.tokenizer.json"),
		"--chat-template", filepath.Join(dir, "llama3.tokenizer_config.json"), "--count", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if got := strings.Fields(out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("counts\n%v\nwant\n%v", got, want)
	}
}

func TestTokenizeText(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, []byte("{\"text\": \"hello world\"}\n\n{\"text\": \"\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := tokenizeMain(t, in) // cl100k_base: "hello" 15339, " world" 1917
	if code != 0 || out != "[15339,1917]\n[]\n" {
		t.Fatalf("exit %d, output %q", code, out)
	}
}

func TestTokenizeBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"not json", "{\"text\": \"a\"}\nnope\n", "in.jsonl:2: want"},
		{"both", `{"text": "a", "messages": [{"role": "user", "content": "b"}]}`, "both given"},
		{"messages without template", `{"messages": [{"role": "user", "content": "b"}]}`, "need --chat-template"},
		{"unknown key", `{"txt": "a"}`, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, "in.jsonl")
			if err := os.WriteFile(in, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			out, code := tokenizeMain(t, in)
			if code != ExitUsage || !strings.Contains(out, tc.want) || strings.Contains(out, "[") && !strings.Contains(out, "sagebench:") {
				t.Fatalf("exit %d, output %q; want exit 2 and %q", code, out, tc.want)
			}
		})
	}
}

// tokenizeMain runs `sagebench tokenize args…` and returns stdout and
// stderr together.
func tokenizeMain(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code := Main(context.Background(), append([]string{"tokenize"}, args...), &out, &out)
	return out.String(), code
}

func FuzzTokenizeLine(f *testing.F) {
	f.Add([]byte(`{"text": "hello"}`))
	f.Add([]byte(`{"messages": [{"role": "user", "content": "hi"}]}`))
	f.Add([]byte(`{"text": null}`))
	f.Add([]byte(`{"text": "a"} {"text": "b"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		in, err := parseTokenizeLine(line)
		if err != nil {
			return
		}
		if (in.Text == nil) == (len(in.Messages) == 0) {
			t.Fatalf("%q: accepted with text %v and %d messages", line, in.Text, len(in.Messages))
		}
	})
}
