package shape

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/sagebench/sagebench/internal/strictyaml"
	"github.com/sagebench/sagebench/internal/tokenizer"
)

func TestDistYAMLAndJSON(t *testing.T) {
	type doc struct {
		In Dist `yaml:"in" json:"in"`
	}
	tests := []struct {
		name, yaml string
		want       Dist
		err        string
	}{
		{"bare number is fixed", "in: 256\n", FixedDist(256), ""},
		{"uniform", "in: {dist: uniform, min: 10, max: 20}\n", Dist{Kind: Uniform, Min: 10, Max: 20}, ""},
		{"lognormal", "in: {dist: lognormal, median: 500, sigma: 0.8, max: 8192}\n", Dist{Kind: LogNormal, Median: 500, Sigma: 0.8, Max: 8192}, ""},
		{"unknown key is an error", "in: {dist: uniform, maxx: 3}\n", Dist{}, "maxx"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d doc
			err := strictyaml.Unmarshal([]byte(tc.yaml), &d)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || d.In.Kind != tc.want.Kind || d.In.Value != tc.want.Value || d.In.Max != tc.want.Max {
				t.Fatalf("got %+v, %v; want %+v", d.In, err, tc.want)
			}
			y, _ := yaml.Marshal(d)
			j, _ := json.Marshal(d)
			var back, backJ doc
			if err := strictyaml.Unmarshal(y, &back); err != nil || back.In.Kind != d.In.Kind {
				t.Errorf("YAML round trip %s: %+v %v", y, back, err)
			}
			if err := json.Unmarshal(j, &backJ); err != nil || backJ.In.Kind != d.In.Kind {
				t.Errorf("JSON round trip %s: %+v %v", j, backJ, err)
			}
		})
	}
}

func TestDistDraws(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "v.txt")
	os.WriteFile(file, []byte("# lengths\n10\n\n20\n30\n"), 0o644)
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("10\nten\n"), 0o644)
	tests := []struct {
		name        string
		d           Dist
		lo, hi      int
		mean, slack float64
		err         string
	}{
		{"fixed", FixedDist(7), 7, 7, 7, 0, ""},
		{"uniform", Dist{Kind: Uniform, Min: 100, Max: 200}, 100, 200, 150, 3, ""},
		{"normal clamped", Dist{Kind: Normal, Mean: 500, SD: 100, Min: 400, Max: 700}, 400, 700, 0, 0, ""},
		{"lognormal median", Dist{Kind: LogNormal, Median: 300, Sigma: 0.5, Max: 5000}, 1, 5000, 0, 0, ""},
		{"empirical file", Dist{Kind: Empirical, File: file}, 10, 30, 20, 1, ""},
		{"empirical bad line", Dist{Kind: Empirical, File: bad}, 0, 0, 0, 0, "bad.txt:2"},
		{"fixed zero", FixedDist(0), 0, 0, 0, 0, "fixed value 0"},
		{"unknown", Dist{Kind: "zipf"}, 0, 0, 0, 0, `unknown dist "zipf"`},
		{"uniform without max", Dist{Kind: Uniform}, 0, 0, 0, 0, "uniform needs max"},
		{"max below min", Dist{Kind: Uniform, Min: 9, Max: 3}, 0, 0, 0, 0, "min 9 and max 3"},
		{"normal without mean", Dist{Kind: Normal, SD: 1}, 0, 0, 0, 0, "mean > 0"},
		{"nan", Dist{Kind: LogNormal, Median: math.NaN()}, 0, 0, 0, 0, "finite"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.d.Compile("qx.llm.input_tokens", 1)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "qx.llm.input_tokens") {
					t.Fatalf("err %v, want %q naming the key", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Bound() != tc.hi {
				t.Errorf("Bound %d, want %d", s.Bound(), tc.hi)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			vals := make([]int, 4000)
			for i := range vals {
				v := s.Draw(rng)
				if v < tc.lo || v > tc.hi {
					t.Fatalf("draw %d outside [%d, %d]", v, tc.lo, tc.hi)
				}
				vals[i] = v
			}
			sum := Summarize(vals)
			if tc.slack > 0 && math.Abs(sum.Mean-tc.mean) > tc.slack {
				t.Errorf("mean %.1f, want %.0f ± %.0f", sum.Mean, tc.mean, tc.slack)
			}
			if tc.d.Kind == LogNormal && (sum.P50 < 285 || sum.P50 > 315) {
				t.Errorf("lognormal p50 %d, want the median 300 ± 5 %%", sum.P50)
			}
		})
	}
}

// TestSynthExact: every synthesized prompt is exactly n tokens of its
// tokenizer, and the same seed gives the same text.
func TestSynthExact(t *testing.T) {
	for _, name := range tokenizer.Builtins() {
		tok, _ := tokenizer.Load(name)
		s, err := NewSynth(tok)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range []int{1, 2, 17, 256, 1000, 4096} {
			seed := rng.Uint64()
			p := s.Prompt(seed, n)
			if got := tok.Count(p); got != n {
				t.Errorf("%s: Prompt(%d) has %d tokens", name, n, got)
			}
			if s.Prompt(seed, n) != p {
				t.Errorf("%s: Prompt(%d) not deterministic", name, n)
			}
		}
		// Longer than the pool: windows of it, so one word per token as
		// above (counting 131k tokens would only repeat that check).
		if long := s.Prompt(9, poolTokens+5); strings.Count(long, " ") != poolTokens+5 || !strings.HasPrefix(long, s.Prompt(9, poolTokens/2)) {
			t.Errorf("%s: a prompt longer than the pool is not made of its windows", name)
		}
		full := s.Block(42, 512)
		if part := s.Block(42, 100); !strings.HasPrefix(full, part) || tok.Count(part) != 100 || tok.Count(full) != 512 {
			t.Errorf("%s: a shorter block is not a prefix of the full one, or counts are off", name)
		}
		if tok.Count(full+s.Prompt(7, 300)) != 812 {
			t.Errorf("%s: block + prompt does not add up", name)
		}
	}
}

// TestSynthFit: Fit gives exactly n tokens in every builtin tokenizer,
// starts with the words that fit (all of them when n is large, none when
// the first is longer than n), and is the same for the same seed.
func TestSynthFit(t *testing.T) {
	words := strings.Fields("bastrai koupleu stoumi drea plaibou zeti trougaista mou")
	for _, name := range tokenizer.Builtins() {
		tok, _ := tokenizer.Load(name)
		s, err := NewSynth(tok)
		if err != nil {
			t.Fatal(err)
		}
		first := tok.Count(words[0])
		tests := []struct {
			name   string
			n      int
			prefix string
		}{
			{"shorter than the first word", first - 1, ""},
			{"the first word exactly", first, words[0]},
			{"a few words", 12, words[0]},
			{"longer than all the words", 200, strings.Join(words, " ")},
		}
		for _, tc := range tests {
			got, ok := s.Fit(words, tc.n, 5)
			if c := tok.Count(got); c != tc.n || !ok {
				t.Errorf("%s, %s: Fit(%d) has %d tokens: %q", name, tc.name, tc.n, c, got)
			}
			if !strings.HasPrefix(got, tc.prefix) || (tc.prefix == "" && strings.HasPrefix(got, words[0])) {
				t.Errorf("%s, %s: Fit(%d) = %q, want it to start with %q", name, tc.name, tc.n, got, tc.prefix)
			}
			if again, _ := s.Fit(words, tc.n, 5); again != got {
				t.Errorf("%s, %s: not deterministic", name, tc.name)
			}
		}
		empty, _ := s.Fit(words, 0, 5)
		if none, _ := s.Fit(nil, 7, 5); empty != "" || none != s.Prompt(5, 7) {
			t.Errorf("%s: Fit of nothing is not empty, or of no words not Prompt", name)
		}
	}
	// A tokenizer that merges across the words' spaces: Fit falls back to
	// synthetic words of the exact length, and says so.
	s, err := NewSynth(merging{tokenizer.Default()})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := s.Fit(words, 12, 5)
	if ok || strings.Contains(got, "bastrai") || (merging{tokenizer.Default()}).Count(got) != 12 {
		t.Errorf("Fit with a non-additive tokenizer = %q, %v; want 12 synthetic tokens and ok false", got, ok)
	}
}

// merging counts one token more for a text that starts with "bastrai "
// than for its words apart: a tokenizer that merges across spaces.
type merging struct{ tokenizer.Tokenizer }

func (m merging) Count(text string) int {
	n := m.Tokenizer.Count(text)
	if strings.HasPrefix(text, "bastrai ") {
		n++
	}
	return n
}

func TestDrawerSeeded(t *testing.T) {
	sh := Shape{InputTokens: Dist{Kind: Uniform, Min: 10, Max: 1000}, Prefix: &Prefix{Groups: 4, Tokens: 64, Share: 0.5},
		Sessions: &Sessions{Turns: Dist{Kind: Uniform, Min: 2, Max: 5}}}
	d, err := sh.Compile("qx.llm", 0, 32)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[int]int{}
	for seed := range uint64(2000) {
		a, b := d.Draw(seed), d.Draw(seed)
		if !reflect.DeepEqual(a, b) || a.Output != 32 || a.Turns < 2 || a.Turns > 5 {
			t.Fatalf("seed %d: %+v vs %+v", seed, a, b)
		}
		groups[a.Group]++
	}
	if len(groups) != 5 || groups[0] < 900 || groups[0] > 1100 {
		t.Errorf("groups %v: want about half without a prefix and 4 groups", groups)
	}
	if _, err := (&Shape{Prefix: &Prefix{Groups: 0, Tokens: 1}}).Compile("qx.llm", 1, 1); err == nil || !strings.Contains(err.Error(), "qx.llm.prefix") {
		t.Errorf("bad prefix: %v", err)
	}
}

// TestTracePairs: a trace as source gives each request one of its
// requests' (input, output) pairs, drawn jointly, with its prefix blocks.
func TestTracePairs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(path, []byte(`{"timestamp": 0, "input_length": 700, "output_length": 10, "hash_ids": [1, 2]}
{"timestamp": 5, "input_length": 30, "output_length": 300}
`), 0o644)
	sh := Shape{Source: &Source{File: path, Format: "mooncake"}}
	d, err := sh.Compile("qx.llm", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[2]int]int{}
	for seed := range uint64(200) {
		l := d.Draw(seed)
		seen[[2]int{l.Input, l.Output}]++
		if (l.Input == 700) != (len(l.Blocks) == 2) {
			t.Fatalf("seed %d: %+v", seed, l)
		}
	}
	if len(seen) != 2 || seen[[2]int{700, 10}] == 0 || seen[[2]int{30, 300}] == 0 {
		t.Errorf("pairs drawn %v, want both of the trace's and no other", seen)
	}
}
