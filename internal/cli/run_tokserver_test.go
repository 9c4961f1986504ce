package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/runconfig"
	"github.com/sagebench/sagebench/internal/stack"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

// serverStack writes a reference-stack config that counts with a
// tokenizer the client never loads (a small BPE trained with Llama 3's
// special tokens) and Llama 3.1's chat template, and returns its path.
func serverStack(t *testing.T, dir string) string {
	t.Helper()
	fixtures, err := filepath.Abs(filepath.Join("..", "chattemplate", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	body := "index: {size: 0}\n" +
		"tokenizer: " + filepath.Join(fixtures, "llama3.tokenizer.json") + "\n" +
		"chat_template: " + filepath.Join(fixtures, "llama3.tokenizer_config.json") + "\n" +
		"engines:\n  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100}\n  - {id: emb-0, kind: embedding, profile: bge-small-cpu}\n"
	p := filepath.Join(dir, "stack.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunTokenizerServer: a quick Q2 with tokenizer: server against the
// reference stack counting in its own tokenizer and template: the setup
// phase calibrates against its POST /tokenize, and every chat request's
// input_tokens — fitted with a shared system prompt or without — is the
// server's prompt_tokens. run.json records the calibration.
func TestRunTokenizerServer(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "results")
	cfg := writeConfig(t, dir, tinyQ2+`  llm:
    input_tokens: {dist: uniform, min: 80, max: 900}
    prefix: {groups: 2, tokens: 40, share: 0.5}
tokenizer: server
target:
  stack_config: `+serverStack(t, dir)+"\n")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", "q2", "-c", cfg, "--output-dir", out)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "warning") {
		t.Errorf("stderr: %s", stderr)
	}
	if !strings.Contains(stdout, "setup: tokenizer: server: calibrating") || !strings.Contains(stdout, "fresh prompts counted as predicted") {
		t.Errorf("no setup phase in the progress:\n%s", stdout)
	}
	dirs := runDirs(t, out)
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	chats, prefixed := 0, 0
	for _, r := range readRequests(t, dirs[0]) {
		if r.Type != "llm" {
			continue
		}
		chats++
		if r.PrefixGroup > 0 {
			prefixed++
		}
		if r.Status != 200 || r.PromptTok != r.InputTokens {
			t.Errorf("%s: status %d, input_tokens %d, server's prompt_tokens %d", r.ID, r.Status, r.InputTokens, r.PromptTok)
		}
	}
	if chats == 0 || prefixed == 0 {
		t.Fatalf("%d chat requests, %d prefixed", chats, prefixed)
	}
	t.Logf("%d chat requests (%d with a system prompt), prompt_tokens == input_tokens on each\n%s", chats, prefixed, stdout)
	var rc struct {
		Tokenizer   string                 `json:"tokenizer"`
		Calibration *tokenizer.Calibration `json:"tokenizer_calibration"`
	}
	if err := json.Unmarshal(readRun(t, dirs[0]).RunConfig, &rc); err != nil {
		t.Fatal(err)
	}
	if rc.Tokenizer != "server" || rc.Calibration == nil || rc.Calibration.Overhead["user"] == 0 || len(rc.Calibration.Words) < 64 {
		t.Errorf("run_config tokenizer %q, calibration %+v", rc.Tokenizer, rc.Calibration)
	}
}

// TestRunTokenizerServerURL: the same against the stack as a URL
// target: the /tokenize preflight, asking fresh sample prompts, finds
// every one counted as sagebench predicts, and says so in the notes.
func TestRunTokenizerServerURL(t *testing.T) {
	dir := t.TempDir()
	scfg, err := stack.LoadConfig(serverStack(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	scfg.Listen = "127.0.0.1:0"
	s, err := stack.Start(t.Context(), scfg, stack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	out := filepath.Join(dir, "results")
	cfg := writeConfig(t, dir, tinyQ2+"  llm: {input_tokens: {dist: uniform, min: 80, max: 900}}\ntokenizer: server\n")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", "q2", "-c", cfg, "--output-dir", out, "--target", s.URL())
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	dirs := runDirs(t, out)
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	for _, r := range readRequests(t, dirs[0]) {
		if r.Type == "llm" && (r.Status != 200 || r.PromptTok != r.InputTokens) {
			t.Errorf("%s: status %d, input_tokens %d, server's prompt_tokens %d", r.ID, r.Status, r.InputTokens, r.PromptTok)
		}
	}
	notes := strings.Join(readRun(t, dirs[0]).Notes, "\n")
	if !strings.Contains(notes, "the server counts every one of 8 sample prompts as sagebench does") {
		t.Errorf("notes:\n%s", notes)
	}
}

// TestRunTokenizerServerRefused: tokenizer: server against a target
// without POST /tokenize, or with a chat template of its own given, or a
// prompt dataset, is exit 2 with one line naming what to do.
func TestRunTokenizerServerRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write([]byte(`{"object":"list","data":[{"id":"meta-llama/Llama-3.1-8B-Instruct"},{"id":"BAAI/bge-small-en-v1.5"}]}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	varying := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt   *string
			Messages []struct{ Content string }
		}
		switch {
		case r.URL.Path == "/v1/models":
			w.Write([]byte(`{"object":"list","data":[{"id":"meta-llama/Llama-3.1-8B-Instruct"},{"id":"BAAI/bge-small-en-v1.5"}]}`))
		case r.URL.Path != "/tokenize" || json.NewDecoder(r.Body).Decode(&req) != nil:
			http.NotFound(w, r)
		case req.Prompt != nil:
			json.NewEncoder(w).Encode(map[string]int{"count": len(strings.Fields(*req.Prompt))})
		default: // a template whose cost grows with the prompt
			n := 0
			for _, m := range req.Messages {
				n += len(strings.Fields(m.Content))
			}
			json.NewEncoder(w).Encode(map[string]int{"count": n + 5 + n/100})
		}
	}))
	defer varying.Close()
	dir := t.TempDir()
	tpl, _ := filepath.Abs(filepath.Join("..", "chattemplate", "testdata", "llama3.tokenizer_config.json"))
	cases := []struct {
		name, yaml, want string
		args             []string
	}{
		{"no /tokenize", tinyQ2 + "tokenizer: server\n", "needs POST /tokenize", []string{"--target", srv.URL}},
		{"template cost varies with the length", tinyQ2 + "tokenizer: server\n", "meta-llama/Llama-3.1-8B-Instruct: its chat template adds", []string{"--target", varying.URL}},
		{"no chat request", tinyQ2 + "  llm_ratio: 0\ntokenizer: server\n", "the run sends no chat request to count", nil},
		{"a chat template too", tinyQ2 + "tokenizer: server\nchat_template: " + tpl + "\n", "chat_template: with tokenizer: server", nil},
		{"sessions", tinyQ2 + "  llm: {sessions: {turns: 2}}\ntokenizer: server\n", "sessions: tokenizer: server", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name)
			cfg := writeConfig(t, t.TempDir(), tc.yaml)
			code, stdout, stderr := runCLI(t, context.Background(), append([]string{"run", "-e", "q2", "-c", cfg, "--output-dir", out}, tc.args...)...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Fatalf("exit %d, want 2 with one line containing %q\nstdout:\n%s\nstderr:\n%s", code, tc.want, stdout, stderr)
			}
			if m, _ := filepath.Glob(filepath.Join(out, "q2", "*")); len(m) != 0 {
				t.Errorf("records written: %v", m)
			}
		})
	}
}

// TestRunTokenizerServerDataset: a prompt dataset's texts (real text,
// not synthesizable: punctuation, digits, other scripts, leading and
// trailing space) are counted by the target once each before the load,
// and every request of one — alone or after a shared system prompt —
// has input_tokens equal to the server's prompt_tokens.
func TestRunTokenizerServerDataset(t *testing.T) {
	dir := t.TempDir()
	prompts := []string{
		"What is the capital of France? Answer in one word.",
		"  Summarise: the quick brown fox jumps over the lazy dog, 3 times!  ",
		"Écris un poème sur la mer — en 4 vers.",
		"def f(x):\n    return x**2  # square it\n",
		"日本の首都はどこですか？",
		"List 5 prime numbers > 100, separated by commas.",
	}
	var convs []map[string]any
	for _, p := range prompts {
		convs = append(convs, map[string]any{"conversations": []map[string]string{{"from": "human", "value": p}, {"from": "gpt", "value": "An answer of a few words."}}})
	}
	b, _ := json.Marshal(convs)
	data := filepath.Join(dir, "sharegpt.json")
	if err := os.WriteFile(data, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	cfg := writeConfig(t, dir, tinyQ2+`  llm:
    source: {file: `+data+`, format: sharegpt}
    prefix: {groups: 2, tokens: 40, share: 0.5}
tokenizer: server
target:
  stack_config: `+serverStack(t, dir)+"\n")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", "q2", "-c", cfg, "--output-dir", out)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "warning") {
		t.Errorf("stderr: %s", stderr)
	}
	if !strings.Contains(stdout, "6 dataset prompts counted") {
		t.Errorf("progress:\n%s", stdout)
	}
	dirs := runDirs(t, out)
	if len(dirs) != 1 {
		t.Fatalf("run dirs %v", dirs)
	}
	chats, prefixed := 0, 0
	for _, r := range readRequests(t, dirs[0]) {
		if r.Type != "llm" {
			continue
		}
		chats++
		if r.PrefixGroup > 0 {
			prefixed++
		}
		if r.Status != 200 || r.PromptTok != r.InputTokens {
			t.Errorf("%s: status %d, input_tokens %d, server's prompt_tokens %d", r.ID, r.Status, r.InputTokens, r.PromptTok)
		}
	}
	if chats == 0 || prefixed == 0 {
		t.Fatalf("%d chat requests, %d prefixed", chats, prefixed)
	}
	t.Logf("%d dataset chats (%d with a system prompt), prompt_tokens == input_tokens on each", chats, prefixed)
}

// TestWarnMisses: a text the calibration does not cover, counted during
// a tokenizer: server run, is said on stderr.
func TestWarnMisses(t *testing.T) {
	cal := tokenizer.NewCalibrated(tokenizer.Calibration{Words: []string{"the"}, Bare: []int{1}})
	var r runconfig.Resolved
	r.Shared.Tokenizer, r.Tokenizer = tokenizer.ServerSpec, tokenizer.ServerRef(cal)
	var stderr strings.Builder
	warnMisses(r, &stderr)
	cal.Count(" the the")
	if stderr.Len() != 0 {
		t.Fatalf("a warning without a miss: %s", stderr.String())
	}
	cal.Count("not calibrated")
	warnMisses(r, &stderr)
	if !strings.Contains(stderr.String(), "1 texts were not synthesized or counted by the target") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestDryRunTokenizerServer: --dry-run says the setup phase will
// calibrate, and sends nothing to do it.
func TestDryRunTokenizerServer(t *testing.T) {
	cfg := writeConfig(t, t.TempDir(), tinyQ2+"tokenizer: server\n")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "-e", "q2", "--dry-run", "-c", cfg)
	if code != ExitOK || !strings.Contains(stdout, "tokenizer: server: a setup phase calibrates against the target's POST /tokenize before the load") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
