package runconfig

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/workload"
	"github.com/sagebench/sagebench/internal/workload/q1"
	"github.com/sagebench/sagebench/internal/workload/q2"
)

func env(m map[string]string) LookupEnv {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExpand(t *testing.T) {
	vars := env(map[string]string{"RATE": "30", "EMPTY": "", "URL": "http://127.0.0.1:9"})
	cases := []struct{ name, in, want, err string }{
		{"plain", "rate: 5", "rate: 5", ""},
		{"set", "rate: ${RATE}", "rate: 30", ""},
		{"default unused", "rate: ${RATE:-7}", "rate: 30", ""},
		{"default used", "rate: ${NOPE:-7}", "rate: 7", ""},
		{"empty uses default", "x: ${EMPTY:-d}", "x: d", ""},
		{"empty without default", "x: '${EMPTY}'", "x: ''", ""},
		{"empty default", "x: '${NOPE:-}'", "x: ''", ""},
		{"two", "${RATE}/${URL}", "30/http://127.0.0.1:9", ""},
		{"escaped", "x: $${RATE}", "x: ${RATE}", ""},
		{"bare dollar", "x: $RATE $", "x: $RATE $", ""},
		{"unset", "rate: ${NOPE}", "", "NOPE is not set"},
		{"unterminated", "rate: ${RATE", "", "unterminated"},
		{"bad name", "x: ${1X}", "", "not a variable name"},
		{"empty name", "x: ${}", "", "not a variable name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Expand(c.in, vars)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"${A}", "${A:-b}", "$${A}", "${", "x${A}y${B:-}z", "${A:-${B}}", "$$$", "}{$"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Expand(s, env(map[string]string{"A": "1"}))
		if err == nil && !strings.Contains(s, "${") && out != s {
			t.Fatalf("text without ${ changed: %q → %q", s, out)
		}
	})
}

func TestParseConfig(t *testing.T) {
	vars := env(map[string]string{"RATE": "33", "TGT": "http://127.0.0.1:9"})
	cases := []struct {
		name, yaml, err string
		check           func(t *testing.T, s Shared, q *q2.Config)
	}{
		{name: "empty file keeps defaults", yaml: "", check: func(t *testing.T, s Shared, q *q2.Config) {
			if s != DefaultShared() || q.Schedule.Rate != 30 {
				t.Errorf("%+v %+v", s, q.Schedule)
			}
		}},
		{name: "shared and section", yaml: "seed: 7\ntarget:\n  url: ${TGT}\n  timeout: 3s\nq2:\n  schedule:\n    rate: ${RATE}\n  llm_ratio: 0.5\n",
			check: func(t *testing.T, s Shared, q *q2.Config) {
				if s.Seed != 7 || s.Target.URL != "http://127.0.0.1:9" || s.Target.Timeout != 3*time.Second || s.Repeat != 1 {
					t.Errorf("shared %+v", s)
				}
				if q.Schedule.Rate != 33 || q.Schedule.Count != 450 || q.LLMRatio != 0.5 || q.Schedule.Process != "poisson" {
					t.Errorf("q2 %+v", q)
				}
			}},
		{name: "validity override", yaml: "validity:\n  max_lag_p99_ms: 20\n", check: func(t *testing.T, s Shared, _ *q2.Config) {
			if s.Validity.MaxLagP99Ms != 20 || s.Validity.MinDeliveredRatio != 0.99 {
				t.Errorf("validity %+v", s.Validity)
			}
		}},
		{name: "precise pacer", yaml: "pacer: precise\n", check: func(t *testing.T, s Shared, _ *q2.Config) {
			if s.Pacer != "precise" {
				t.Errorf("pacer %q", s.Pacer)
			}
		}},
		{name: "unknown top key", yaml: "seeed: 3\n", err: `cfg.yaml:1:1: seeed: unknown field "seeed"`},
		{name: "unknown nested key", yaml: "q2:\n  schedule:\n    rat: 3\n", err: `cfg.yaml:3:5: q2.schedule.rat: unknown field "rat"`},
		{name: "unknown target key", yaml: "target:\n  api_key: sk-123\n", err: "target.api_key: unknown field"},
		{name: "wrong type", yaml: "q2:\n  llm_ratio: lots\n", err: "cfg.yaml:2:14: q2.llm_ratio"},
		{name: "bad duration", yaml: "drain: forever\n", err: "cfg.yaml:1:8: drain"},
		{name: "unknown section", yaml: "q9:\n  rate: 1\n", err: `unknown field "q9"`},
		{name: "unset variable", yaml: "seed: ${SEED}\n", err: "SEED is not set"},
		{name: "syntax", yaml: "seed: [1,\n", err: "cfg.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := DefaultShared()
			f, err := ParseConfig("cfg.yaml", []byte(c.yaml), &s, vars)
			var q *q2.Config
			if err == nil {
				q = q2.Default(false)
				err = f.Decode(q2.Spec(), q)
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want it to contain %q", err, c.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans lines: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, s, q)
		})
	}
}

func FuzzConfig(f *testing.F) {
	for _, s := range []string{"", "seed: 1\n", "q2:\n  schedule: {rate: 3, count: 5}\n", "target: {url: embedded}\n",
		"q2: [1,2]\n", "validity: {max_lag_p99_ms: -1}\n", "q2:\n  policies: [fifo, x]\n", "&a [*a]", "seed: ${X:-3}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := DefaultShared()
		file, err := ParseConfig("fuzz.yaml", data, &s, env(nil))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		q := q2.Default(true)
		if err := file.Decode(q2.Spec(), q); err != nil {
			return
		}
		small := q.Schedule.Count <= 10000 && q.Schedule.Duration <= time.Minute && q.Schedule.Rate <= 1000
		if s.Validate() == nil && q.Validate() == nil && small && q.Schedule.Process != "trace" {
			wl := q2.Spec().New(true)
			*wl.Config().(*q2.Config) = *q
			if _, err := wl.Plan(s.Seed); err != nil {
				t.Fatalf("valid config without a plan: %v", err)
			}
		}
	})
}

// TestResolveKeepsURLSecretsOut: credentials in --target (user info, a
// key in the query) must not reach run_config, the effective YAML or the
// config hash; only api_key_env / admin_token_env carry secrets.
func TestResolveKeepsURLSecretsOut(t *testing.T) {
	tests := []struct {
		name, url string
		refused   bool // a URL that cannot be a base URL: the error must not show the secret either
	}{
		{"user info", "http://bob:s3cr3t@127.0.0.1:8000/v1", false},
		{"query key", "http://127.0.0.1:8000/v1?api_key=s3cr3t", true},
		{"fragment", "http://127.0.0.1:8000/v1#s3cr3t", true},
	}
	s := DefaultShared()
	s.Target.URL = "http://127.0.0.1:8000/v1"
	clean, _, err := Resolve(q2.Spec(), s, nil, workload.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.Target.URL = tc.url
			r, _, err := Resolve(q2.Spec(), s, nil, workload.Overrides{})
			if tc.refused {
				if err == nil || strings.Contains(err.Error(), "s3cr3t") {
					t.Errorf("Resolve error %v: want a refusal that hides the secret", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for what, b := range map[string][]byte{"run_config": r.RunConfig, "yaml": r.YAML} {
				if strings.Contains(string(b), "s3cr3t") {
					t.Errorf("%s holds the secret: %s", what, b)
				}
			}
			if r.ConfigHash != clean.ConfigHash {
				t.Errorf("config hash depends on the URL's secret part")
			}
			if r.Shared.Target.URL != tc.url {
				t.Errorf("the target used for traffic lost its URL: %q", r.Shared.Target.URL)
			}
		})
	}
}

// TestConfigHashIsPinned: the config_hash of each Q's default
// configuration is part of the records' contract (runs are matched by
// it); a change here must be deliberate and said in the changelog.
func TestConfigHashIsPinned(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  workload.Spec
		quick bool
		want  string
	}{
		{"Q1 full", q1.Spec(), false, "21b1fdbdd6f8667bebd540ccd24ad72d2d53369a08b880139e6577210cdfc790"},
		{"Q1 quick", q1.Spec(), true, "7ada9657f85ab096a821428ad455cc2d713c8538adfae62be8ceca2bb4f22c35"},
		{"Q2 full", q2.Spec(), false, "9d8b0c19d748b4d0a51ee34f38426f9e534c3490e7d59d2c11590d912b5ec425"},
		{"Q2 quick", q2.Spec(), true, "9b57a6d9a90f3d77ce638db847e64501ef37351917050131850b8a7cbd5b9d67"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultShared()
			s.Quick = tc.quick
			r, _, err := Resolve(tc.spec, s, nil, workload.Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			if r.ConfigHash != tc.want {
				t.Errorf("config_hash %s, want %s", r.ConfigHash, tc.want)
			}
		})
	}
}

// TestHostileConfigFiles: an endless file and a document nested 100,000
// deep are refused before any YAML parser sees them, quickly and without
// taking the memory they would.
func TestHostileConfigFiles(t *testing.T) {
	s := DefaultShared()
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := LoadFile("/dev/zero", &s, env(nil)); err == nil {
			t.Error("-c /dev/zero accepted")
		}
	}
	deep := "q2:\n  schedule: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "\n"
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	before := m.TotalAlloc
	if _, err := ParseConfig("deep.yaml", []byte(deep), &s, env(nil)); err == nil || !strings.Contains(err.Error(), "deep.yaml") {
		t.Errorf("100k-deep config: %v, want an error naming the file", err)
	}
	runtime.ReadMemStats(&m)
	if grew := m.TotalAlloc - before; grew > 64<<20 {
		t.Errorf("refusing a 100k-deep config allocated %d MiB", grew>>20)
	}
}

// TestDeprecatedKeys: each deprecated key a file uses gets one line
// naming the file, the key and what to write instead; a file without them
// none.
func TestDeprecatedKeys(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"none", "q1:\n  question_tokens: 24\n", nil},
		{"prompt_words", "q2:\n  llm:\n    prompt_words: 100\n", []string{"c.yaml: prompt_words is deprecated: it is read as input_tokens"}},
		{"query_words", "q1:\n  query_words: 8\n", []string{"c.yaml: query_words is deprecated: it is read as q1.question_tokens"}},
		{"both", "q1:\n  query_words: 8\nq2:\n  llm:\n    prompt_words: 100\n", []string{"prompt_words", "query_words"}},
		{"flow style", "q2:\n  llm: {model: m, prompt_words: 100}\n", []string{"prompt_words is deprecated"}},
		{"in a comment", "q1:\n  question_tokens: 24 # was query_words: 8\n", nil},
		{"zero", "q1:\n  query_words: 0\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultShared()
			f, err := ParseConfig("c.yaml", []byte(tc.yaml), &s, env(nil))
			if err != nil {
				t.Fatal(err)
			}
			got := f.Deprecated()
			if len(got) != len(tc.want) {
				t.Fatalf("Deprecated() = %q, want %d lines", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("line %d %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}
