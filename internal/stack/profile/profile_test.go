package profile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testLLM() LLM {
	return LLM{
		Name: "t", Model: "m", Sources: []Source{{Ref: "r", Read: "x"}},
		MaxNumSeqs: 4, KVCacheTokens: 1000, KVBlockTokens: 16, MaxWaiting: 8,
		PrefillPerToken: 100 * time.Microsecond, PrefillChunk: 64,
		StepBase: 10 * time.Millisecond, StepPerSeq: time.Millisecond,
		DefaultMaxTokens: 16,
	}
}

func TestLLMTimingModel(t *testing.T) {
	p := testLLM()
	tests := []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"StepTime(0)", p.StepTime(0), 10 * time.Millisecond},
		{"StepTime(1)", p.StepTime(1), 11 * time.Millisecond},
		{"StepTime(32)", p.StepTime(32), 42 * time.Millisecond},
		{"StepTime(-1) clamps", p.StepTime(-1), 10 * time.Millisecond},
		{"PrefillTime(0)", p.PrefillTime(0), 0},
		{"PrefillTime(50)", p.PrefillTime(50), 5 * time.Millisecond},
		{"IterationTime(3,20)", p.IterationTime(3, 20), 15 * time.Millisecond},
		{"IdleTTFT(50) one chunk", p.IdleTTFT(50), 11*time.Millisecond + 5*time.Millisecond},
		{"IdleTTFT(64) exactly one chunk", p.IdleTTFT(64), 11*time.Millisecond + 6400*time.Microsecond},
		{"IdleTTFT(65) two chunks", p.IdleTTFT(65), 22*time.Millisecond + 6500*time.Microsecond},
		{"IdleITL", p.IdleITL(), 11 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestLLMCounts(t *testing.T) {
	p := testLLM()
	tests := []struct {
		name      string
		got, want int
	}{
		{"PrefillSteps(0)", p.PrefillSteps(0), 1},
		{"PrefillSteps(64)", p.PrefillSteps(64), 1},
		{"PrefillSteps(129)", p.PrefillSteps(129), 3},
		{"KVTokens(10,6) one page", p.KVTokens(10, 6), 16},
		{"KVTokens(10,7) two pages", p.KVTokens(10, 7), 32},
		{"KVTokens(0,0)", p.KVTokens(0, 0), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %d, want %d", tt.got, tt.want)
			}
		})
	}
}

func TestEmbedderBatchTime(t *testing.T) {
	p := Embedder{BatchOverhead: 2 * time.Millisecond, PerToken: 60 * time.Microsecond}
	for _, tt := range []struct {
		tokens int
		want   time.Duration
	}{{0, 2 * time.Millisecond}, {1, 2060 * time.Microsecond}, {100, 8 * time.Millisecond}, {-3, 2 * time.Millisecond}} {
		if got := p.BatchTime(tt.tokens); got != tt.want {
			t.Errorf("BatchTime(%d) = %v, want %v", tt.tokens, got, tt.want)
		}
	}
}

func TestDefaultCatalog(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"llama3.1-8b-h100", "llama3.1-8b-a10g"} {
		p, err := c.LLM(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Sources) < 2 {
			t.Errorf("%s: want at least two sources, got %d", name, len(p.Sources))
		}
	}
	for _, name := range []string{"bge-small-cpu", "bge-large-gpu"} {
		if _, err := c.Embedder(name); err != nil {
			t.Fatal(err)
		}
	}
	// The design's calibration targets: 8B on H100, TTFT 60-120 ms for 1-2k
	// token prompts at low load, ITL 10-15 ms at a busy batch (100-200 seqs).
	h100, _ := c.LLM("llama3.1-8b-h100")
	if ttft := h100.IdleTTFT(1000); ttft < 50*time.Millisecond || ttft > 120*time.Millisecond {
		t.Errorf("h100 IdleTTFT(1000) = %v, outside the calibrated 50-120 ms", ttft)
	}
	if itl := h100.StepTime(128); itl < 10*time.Millisecond || itl > 15*time.Millisecond {
		t.Errorf("h100 StepTime(128) = %v, outside 10-15 ms", itl)
	}
	a10g, _ := c.LLM("llama3.1-8b-a10g")
	if a10g.IdleITL() <= h100.IdleITL() || a10g.KVCacheTokens >= h100.KVCacheTokens {
		t.Error("the smaller GPU profile must be slower and hold less KV than the H100 one")
	}
}

func TestLookupUnknown(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LLM("nope"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "llama3.1-8b-h100") {
		t.Errorf("LLM(nope) = %v, want ErrUnknown listing known names", err)
	}
	if _, err := c.Embedder("llama3.1-8b-h100"); !errors.Is(err, ErrUnknown) {
		t.Errorf("an LLM name is not an embedder: got %v", err)
	}
	names := c.Names()
	if len(names) != 4 || names[0] != "bge-large-gpu" {
		t.Errorf("Names() = %v", names)
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		file string
		want []string // substrings of the error
	}{
		{"unknown_key.yaml", []string{"unknown_key.yaml", "step_bsae"}},
		{"bad_values.yaml", []string{`profile "bad"`, "max_num_seqs: must be > 0", "jitter: must be in [0, 1)", "step_base: must be > 0"}},
		{"no_source.yaml", []string{`profile "nosrc"`, "source: give at least one"}},
		{"duplicate.yaml", []string{"duplicate profile name"}},
		{"bad_duration.yaml", []string{"bad_duration.yaml", "per_token"}},
		{"empty.yaml", []string{"no profiles"}},
		{"missing.yaml", []string{"reading profile catalog", "missing.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := LoadFile(filepath.Join("testdata", tt.file))
			if err == nil {
				t.Fatal("LoadFile succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLoadFileRoundTripsEmbedded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, embedded, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := Default()
	if got, want := strings.Join(c.Names(), ","), strings.Join(d.Names(), ","); got != want {
		t.Errorf("names %s, want %s", got, want)
	}
}

// TestParseSurvivesDecoderPanic: a tagged mapping where a list belongs
// makes the YAML decoder dereference nil; Parse must answer an error.
func TestParseSurvivesDecoderPanic(t *testing.T) {
	_, err := Parse([]byte("llm:\n !0\n    0: 0\n"))
	if err == nil || !strings.Contains(err.Error(), "malformed YAML") {
		t.Fatalf("Parse = %v, want a malformed YAML error", err)
	}
}

func TestFieldErrorIsTyped(t *testing.T) {
	p := testLLM()
	p.KVCacheTokens = 8 // smaller than one page
	var fe *FieldError
	if err := p.Validate(); !errors.As(err, &fe) || fe.Field != "kv_cache_tokens" {
		t.Fatalf("Validate() = %v, want a FieldError on kv_cache_tokens", err)
	}
}

func FuzzLoad(f *testing.F) {
	f.Add(embedded)
	for _, name := range []string{"unknown_key.yaml", "bad_values.yaml", "duplicate.yaml"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("llm: [{name: x}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		// Whatever parses must be valid and usable by the timing model.
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid catalog: %v", err)
		}
		for _, p := range c.LLMs {
			if p.IdleTTFT(100) <= 0 || p.StepTime(p.MaxNumSeqs) <= 0 {
				t.Fatalf("non-positive timing from accepted profile %+v", p)
			}
		}
	})
}
