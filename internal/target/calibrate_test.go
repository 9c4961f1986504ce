package target_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/chattemplate"
	"github.com/sagebench/sagebench/internal/shape"
	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

const llama = "meta-llama/Llama-3.1-8B-Instruct"

// fixtures are a tokenizer the client never loads (a small model trained
// with the family's special tokens: chattemplate's testdata) and that
// family's chat template.
func fixtures(family string) (tok, tpl string) {
	dir := filepath.Join("..", "chattemplate", "testdata")
	return filepath.Join(dir, family+".tokenizer.json"), filepath.Join(dir, family+".tokenizer_config.json")
}

// openServerStack starts the reference stack counting with the fixture
// tokenizer and template of family (its own config: the run's tokenizer
// is the server's) and opens it as a target.
func openServerStack(t *testing.T, family string, withTemplate bool) *target.Target {
	t.Helper()
	tokFile, tplFile := fixtures(family)
	yaml := "index: {size: 0}\ntokenizer: " + tokFile + "\nengines:\n  - {id: llm-0, kind: llm, profile: llama3.1-8b-h100}\n"
	if withTemplate {
		yaml += "chat_template: " + tplFile + "\n"
	}
	tgt, err := target.Open(t.Context(), target.Config{URL: target.Embedded}, target.Options{Start: target.EmbeddedStack(nil),
		StackYAML: []byte(yaml), Tokenizer: tokenizer.NewRef(tokenizer.ServerSpec)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close(context.Background()) })
	return tgt
}

// TestCalibrateAgainstKnownTruth: calibrated against the reference stack
// (a tokenizer and a chat template the client does not load), prompts
// fitted to N tokens are N tokens in the stack's own tokenizer, rendered
// with its template — checked here with the files themselves, on
// structures, lengths and seeds the calibration never saw. A family the
// calibration cannot predict is refused with a CalibrationError, never
// calibrated wrong.
func TestCalibrateAgainstKnownTruth(t *testing.T) {
	cases := []struct {
		family   string
		template bool
		trims    bool   // the template trims a message (Llama 3's)
		refused  string // the CalibrationError's reason
	}{
		{"llama3", true, true, ""},
		{"llama3", false, false, ""},
		{"qwen2.5", true, false, ""},
		// SentencePiece with a prefix space: no word is one token after a space
		{"mistral", true, false, "common English words are one token"},
		// Gemma's template trims a message, and its tokenizer counts a
		// first word after the turn header neither as in running text nor
		// as alone: refused; its template also raises on a system message
		// (vLLM answers 400 too), which a run with system prompts needs
		{"gemma", true, false, "not a constant"},
		{"gemma system prompts", true, false, "refuses system+user chat messages"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s template %v", tc.family, tc.template), func(t *testing.T) {
			family, needed := strings.TrimSuffix(tc.family, " system prompts"), [][]string(nil)
			if family != tc.family {
				needed = [][]string{{"system", "user"}}
			}
			tokFile, tplFile := fixtures(family)
			truthTok, err := tokenizer.Load(tokFile)
			if err != nil {
				t.Fatal(err)
			}
			truthTpl, err := chattemplate.Load(tplFile)
			if err != nil {
				t.Fatal(err)
			}
			tgt := openServerStack(t, family, tc.template)
			start := time.Now()
			cal, err := tgt.Calibrate(t.Context(), []string{llama, llama, ""}, needed...)
			if tc.refused != "" {
				var ce *target.CalibrationError
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("err %v, want a CalibrationError saying %q", err, tc.refused)
				}
				t.Logf("refused: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := cal.Calibration()
			t.Logf("%d words kept (%d dropped), trims %v, overhead %v, %d verified, %d requests in %v", len(c.Words), len(c.Dropped), c.Trims, c.Overhead, c.Verified, c.Requests, time.Since(start).Round(time.Millisecond))
			if len(c.Models) != 1 || c.Verified == 0 || c.Requests == 0 || len(c.Words) < 64 {
				t.Fatalf("calibration %+v", c)
			}
			if c.Trims != tc.trims {
				t.Errorf("trims %v, want %v", c.Trims, tc.trims)
			}
			if !tc.template && c.Overhead["user"] != 0 {
				t.Errorf("overhead %v without a template", c.Overhead)
			}
			checkTruth(t, cal, c, func(msgs []chattemplate.Message) int {
				if !tc.template {
					n := 0
					for _, m := range msgs {
						n += truthTok.Count(m.Content)
					}
					return n
				}
				text, err := truthTpl.Render(msgs, true)
				if err != nil {
					t.Fatal(err)
				}
				return truthTok.Count(text)
			})
		})
	}
}

// checkTruth fits prompts of both structures at lengths and seeds the
// calibration never saw and compares with truth, the server's files.
func checkTruth(t *testing.T, cal *tokenizer.Calibrated, c tokenizer.Calibration, truth func([]chattemplate.Message) int) {
	t.Helper()
	synth, err := shape.NewSynth(cal)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{3, 90, 1234, 5000} {
		for _, st := range shape.ServerStructures() {
			if _, ok := c.Overhead[tokenizer.Structure(st)]; !ok {
				continue // not calibrated: the target refuses it
			}
			msgs := []chattemplate.Message{{Role: "user"}}
			if len(st) == 2 {
				msgs = []chattemplate.Message{{Role: "system", Content: synth.Block(uint64(i), 50)}, {Role: "user"}}
			}
			n := n + 50*(len(st)-1) + c.Overhead[tokenizer.Structure(st)]
			got, ok, err := synth.FitChat(msgs, n, uint64(i)*977)
			if err != nil || !ok || got != n {
				t.Fatalf("FitChat %v %d: %d %v %v", st, n, got, ok, err)
			}
			if truth := truth(msgs); truth != n {
				t.Errorf("%v fitted to %d: the server's tokenizer counts %d", st, n, truth)
			}
		}
	}
	if cal.Misses() != 0 {
		t.Errorf("%d texts counted by the fallback", cal.Misses())
	}
}

// tokenizeServer is a URL target whose /tokenize counts whitespace
// words, adding extra(words) for chat messages: a template whose cost
// varies with the length cannot be offset exactly.
func tokenizeServer(t *testing.T, extra func(words int) int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			w.Write([]byte(`{"data":[]}`))
			return
		case "/tokenize":
		default:
			http.NotFound(w, r)
			return
		}
		var req struct {
			Prompt   *string
			Messages []chattemplate.Message
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		n := 0
		if req.Prompt != nil {
			n = len(strings.Fields(*req.Prompt))
		} else {
			for _, m := range req.Messages {
				n += len(strings.Fields(m.Content))
			}
			n += extra(n)
		}
		json.NewEncoder(w).Encode(map[string]int{"count": n})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestCalibrateRefuses(t *testing.T) {
	cases := []struct {
		name  string
		extra func(int) int
		want  string
	}{
		{"constant overhead", func(int) int { return 7 }, ""},
		{"overhead growing with length", func(n int) int { return 5 + n/100 }, "not a constant"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tgt, err := target.Open(t.Context(), target.Config{URL: tokenizeServer(t, tc.extra)}, target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tgt.Close(context.Background())
			cal, err := tgt.Calibrate(t.Context(), []string{"m"})
			if tc.want == "" {
				if err != nil || cal.Calibration().Overhead["user"] != 7 || cal.Calibration().Overhead["system+user"] != 7 {
					t.Fatalf("err %v, calibration %+v", err, cal)
				}
				return
			}
			var ce *target.CalibrationError
			if !errors.As(err, &ce) || ce.Model != "m" || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "tokenizer.json") {
				t.Fatalf("err %v, want a CalibrationError naming model m and %q", err, tc.want)
			}
		})
	}
}

func TestCalibrateWithoutTokenize(t *testing.T) {
	tgt := openServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write([]byte(`{"data":[]}`))
			return
		}
		http.NotFound(w, r)
	}))
	_, err := tgt.Calibrate(t.Context(), []string{"m"})
	var nt *target.NoTokenizeError
	if !errors.As(err, &nt) || !strings.Contains(err.Error(), "POST /tokenize") {
		t.Fatalf("err %v, want a NoTokenizeError", err)
	}
}

// TestCountTextsBounded: more distinct prompts than MaxServerTexts is
// refused before any is sent; repeats count once.
func TestCountTextsBounded(t *testing.T) {
	var asked atomic.Int64
	url := tokenizeServer(t, func(int) int { asked.Add(1); return 4 })
	tgt, err := target.Open(t.Context(), target.Config{URL: url}, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close(context.Background())
	cal := tokenizer.NewCalibrated(tokenizer.Calibration{Models: []string{"m"}, Words: shape.Candidates(), Bare: make([]int, len(shape.Candidates())),
		Overhead: map[string]int{"user": 4, "system+user": 4}})
	texts := make([]string, target.MaxServerTexts+1)
	for i := range texts {
		texts[i] = fmt.Sprint("prompt ", i)
	}
	var tm *target.TooManyTextsError
	if _, err := tgt.CountTexts(t.Context(), cal, texts); !errors.As(err, &tm) || asked.Load() != 0 {
		t.Fatalf("err %v after %d requests, want TooManyTextsError before any", err, asked.Load())
	}
	got, err := tgt.CountTexts(t.Context(), cal, []string{"a b", "a b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	c := got.Calibration()
	if n, ok := got.Known("a b"); !ok || n != 2 || c.Texts != 2 || asked.Load() != 2+2 || c.TextRequests != 2+2 { // each distinct text once, then each after a system prompt
		t.Errorf("Known %d %v, %d texts, %d requests (%d recorded)", n, ok, c.Texts, asked.Load(), c.TextRequests)
	}
}

// TestCountTextsRefusesInconsistentCounts: a count below the template's
// own tokens, or two models that count a prompt differently, are refused
// (never stored, never a negative input_tokens); after the first error no
// more prompts are sent.
func TestCountTextsRefusesInconsistentCounts(t *testing.T) {
	var asked atomic.Int64
	tgt := openServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string
			Messages []chattemplate.Message
		}
		if r.URL.Path != "/tokenize" || json.NewDecoder(r.Body).Decode(&req) != nil {
			w.Write([]byte(`{"data":[]}`))
			return
		}
		asked.Add(1)
		n := map[string]int{"short": 1, "a": 4 + 3, "b": 4 + 5, "broken": -1}[req.Model]
		if n < 0 {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(map[string]int{"count": n})
	}))
	texts := make([]string, 200)
	for i := range texts {
		texts[i] = fmt.Sprint("x y z ", i)
	}
	for _, tc := range []struct {
		name   string
		models []string
		want   string
	}{
		{"fewer than the template", []string{"short"}, "fewer than the template's own 4"},
		{"models disagree", []string{"a", "b"}, "where another model counts 3"},
		{"a broken server", []string{"broken"}, "500 Internal Server Error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked.Store(0)
			cal := tokenizer.NewCalibrated(tokenizer.Calibration{Models: tc.models, Words: shape.Candidates(), Bare: make([]int, len(shape.Candidates())),
				Overhead: map[string]int{"user": 4}})
			got, err := tgt.CountTexts(t.Context(), cal, texts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || got != nil {
				t.Fatalf("CountTexts: %v, %v; want an error with %q", got, err, tc.want)
			}
			if n := asked.Load(); n > int64(len(texts))+8 || (tc.name != "models disagree" && n > 8) {
				t.Errorf("%d requests sent after the first error", n)
			}
		})
	}
}

// TestTokenizeAnswerBounded: a /tokenize answer with a huge number is an
// error of bounded size, and a count beyond any prompt is refused.
func TestTokenizeAnswerBounded(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"a number of 512 KiB", `{"count":` + strings.Repeat("9", 1<<19) + `}`, "is not vLLM's"},
		{"a count beyond any prompt", `{"count":9000000000000000000}`, "want 0 to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tgt := openServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(tc.body))
			}))
			_, err := tgt.CountPrompt(t.Context(), "m", "hello")
			if err == nil || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 400 {
				t.Fatalf("err (%d bytes) %.300v; want one under 400 bytes with %q", len(fmt.Sprint(err)), err, tc.want)
			}
		})
	}
}

// TestCalibrateLeavesOutRefusedStructure: a /tokenize that refuses
// system messages (a template that raises on them) leaves that structure
// out of a calibration for a run that sends none, and refuses one that
// does.
func TestCalibrateLeavesOutRefusedStructure(t *testing.T) {
	tgt := openServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt   *string
			Messages []chattemplate.Message
		}
		switch {
		case r.URL.Path == "/v1/models":
			w.Write([]byte(`{"data":[]}`))
		case r.URL.Path != "/tokenize" || json.NewDecoder(r.Body).Decode(&req) != nil:
			http.NotFound(w, r)
		case req.Prompt != nil:
			json.NewEncoder(w).Encode(map[string]int{"count": len(strings.Fields(*req.Prompt))})
		case len(req.Messages) > 1:
			http.Error(w, `{"error":{"message":"System role not supported"}}`, http.StatusBadRequest)
		default:
			json.NewEncoder(w).Encode(map[string]int{"count": 3 + len(strings.Fields(req.Messages[0].Content))})
		}
	}))
	cal, err := tgt.Calibrate(t.Context(), []string{"m"})
	if err != nil {
		t.Fatal(err)
	}
	if over := cal.Calibration().Overhead; over["user"] != 3 || len(over) != 1 {
		t.Errorf("overhead %v, want user: 3 alone", over)
	}
	var ce *target.CalibrationError
	if _, err := tgt.Calibrate(t.Context(), []string{"m"}, []string{"system", "user"}); !errors.As(err, &ce) || ce.Refused != "system+user" {
		t.Errorf("err %v, want the system+user structure refused", err)
	}
}

// TestCalibrateDeadlineDuringBareCounts: a deadline that expires while
// the bare counts are in flight (4 at a time) is reported with the
// requests so far, read under the budget's lock (go test -race).
func TestCalibrateDeadlineDuringBareCounts(t *testing.T) {
	tgt := openServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt   *string
			Messages []chattemplate.Message
		}
		if r.URL.Path != "/tokenize" || json.NewDecoder(r.Body).Decode(&req) != nil {
			w.Write([]byte(`{"data":[]}`))
			return
		}
		n := 0
		if req.Prompt != nil {
			n = len(strings.Fields(*req.Prompt))
			if !strings.HasPrefix(*req.Prompt, " ") && n == 1 {
				time.Sleep(20 * time.Millisecond) // a bare word: slow
			}
		}
		for _, m := range req.Messages {
			n += len(strings.Fields(m.Content)) + 3
		}
		json.NewEncoder(w).Encode(map[string]int{"count": n})
	}))
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
	defer cancel()
	if _, err := tgt.Calibrate(ctx, []string{"m"}); err == nil || !strings.Contains(err.Error(), "took longer than") {
		t.Fatalf("Calibrate past its deadline: %v", err)
	}
}

// openServer serves h on loopback and opens a target on it; both close
// when the test ends.
func openServer(t *testing.T, h http.Handler) *target.Target {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tgt, err := target.Open(t.Context(), target.Config{URL: srv.URL}, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close(context.Background()) })
	return tgt
}
