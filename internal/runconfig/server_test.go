package runconfig

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/tokenizer"
	"github.com/sagebench/sagebench/internal/workload"
	"github.com/sagebench/sagebench/internal/workload/q1"
	"github.com/sagebench/sagebench/internal/workload/q2"
	"github.com/sagebench/sagebench/internal/workload/q3"
)

// TestServerTokenizerResolve: tokenizer: server resolves for what it
// can count exactly — synthesized prompts, a trace's lengths — and is
// refused, naming the key and what to do, where it cannot.
func TestServerTokenizerResolve(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "sharegpt.json")
	if err := os.WriteFile(data, []byte(`[{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "azure.csv")
	if err := os.WriteFile(trace, []byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		spec workload.Spec
		yaml string
		err  string
	}{
		{"synthesized prompts", q2.Spec(), "", ""},
		{"shared prefixes", q3.Spec(), "q3:\n  llm:\n    prefix: {groups: 2, tokens: 64, share: 0.5}\n", ""},
		{"a trace's lengths", q2.Spec(), "q2:\n  llm:\n    source: {file: " + trace + ", format: azure}\n", ""},
		{"a prompt dataset", q2.Spec(), "q2:\n  llm:\n    source: {file: " + data + ", format: sharegpt}\n", ""},
		{"a dataset's sessions", q2.Spec(), "q2:\n  llm:\n    source: {file: " + data + ", format: sharegpt, sessions: true}\n", "q2.llm.source.sessions: tokenizer: server"},
		{"sessions", q2.Spec(), "q2:\n  llm:\n    sessions: {turns: 2}\n", "q2.llm.sessions: tokenizer: server"},
		{"Q1", q1.Spec(), "", "Q1's prompt is the retrieved passages"},
		{"a chat template", q2.Spec(), "chat_template: " + filepath.Join("..", "chattemplate", "testdata", "llama3.tokenizer_config.json") + "\n", "chat_template: with tokenizer: server"},
		{"nodes", q3.Spec(), "nodes: 2\n", "does not run with --nodes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultShared()
			s.Quick = true
			f, err := ParseConfig("c.yaml", []byte("tokenizer: server\n"+tc.yaml), &s, env(nil))
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := Resolve(tc.spec, s, f, workload.Overrides{})
			if (err != nil) != (tc.err != "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
			if err != nil {
				return
			}
			if got := ServerPrompts(r.Workload.Config()); tc.name == "a prompt dataset" != slices.Equal(got, []string{"hi"}) {
				t.Errorf("dataset prompts %q", got)
			}
			if got := len(ServerStructures(r.Workload.Config())); got != 1+btoi(strings.Contains(tc.yaml, "prefix")) {
				t.Errorf("%d message structures", got)
			}
			if _, err := r.Tokenizer.Get(); err != tokenizer.ErrNotCalibrated {
				t.Errorf("an uncalibrated server tokenizer: %v", err)
			}
		})
	}
}

// TestWithCalibration: the calibration goes into run_config, while the
// YAML (what -c reproduces) and the hashes stay the run's; the Ref is
// the calibrated tokenizer.
func TestWithCalibration(t *testing.T) {
	s := DefaultShared()
	s.Quick, s.Tokenizer = true, tokenizer.ServerSpec
	r, _, err := Resolve(q2.Spec(), s, nil, workload.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	cal := tokenizer.NewCalibrated(tokenizer.Calibration{Models: []string{"m"}, Words: []string{"the", "of"}, Bare: []int{1, 1},
		Overhead: map[string]int{"user": 5, "system+user": 9}, Verified: 8, Requests: 100})
	c, err := r.WithCalibration(cal)
	if err != nil {
		t.Fatal(err)
	}
	if c.ConfigHash != r.ConfigHash || c.WorkloadHash != r.WorkloadHash || !bytes.Equal(c.YAML, r.YAML) {
		t.Error("the calibration changed the YAML or a hash")
	}
	var rc struct {
		Tokenizer string                `json:"tokenizer"`
		Cal       tokenizer.Calibration `json:"tokenizer_calibration"`
	}
	if err := json.Unmarshal(c.RunConfig, &rc); err != nil {
		t.Fatal(err)
	}
	if rc.Tokenizer != "server" || rc.Cal.Overhead["system+user"] != 9 || rc.Cal.Verified != 8 {
		t.Errorf("run_config %s", c.RunConfig)
	}
	if got, err := c.Tokenizer.Get(); err != nil || got != tokenizer.Tokenizer(cal) {
		t.Errorf("Ref %v, %v", got, err)
	}
	if _, err := (Resolved{Shared: DefaultShared()}).WithCalibration(cal); err == nil {
		t.Error("a calibration taken for another tokenizer")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
