package stack

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/strictyaml"
)

// TestLoadConfigHostile: `serve --config` on a 100k-deep document or on
// /dev/zero is a bounded error, not gigabytes of RSS or an endless read.
func TestLoadConfigHostile(t *testing.T) {
	deep := t.TempDir() + "/deep.yaml"
	os.WriteFile(deep, []byte("engines: "+strings.Repeat("[", 100_000)+"\n"), 0o644)
	tests := []struct {
		name, path string
		want       error
	}{
		{"100k deep", deep, strictyaml.ErrTooDeep},
		{"/dev/zero", "/dev/zero", strictyaml.ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := LoadConfig(tc.path); !errors.Is(err, tc.want) {
				t.Fatalf("LoadConfig = %v, want %v", err, tc.want)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("listen: 127.0.0.1:0\nengines:\n  - {id: a, kind: llm, profile: llama3.1-8b-h100}\n"))
	f.Add([]byte("quotas: {tenants: {gold: {weight: 3, rate: 5.5}}}\nlimits: {max_body_bytes: 2048}\n"))
	f.Add([]byte("engines:\n !0\n    0: 0\n"))
	f.Add([]byte("engines: " + strings.Repeat("[", 5000)))
	f.Add([]byte(strings.Repeat("- ", 3000)))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data)
		if err == nil {
			if verr := cfg.Validate(); verr != nil {
				t.Fatalf("ParseConfig accepted a config Validate refuses: %v", verr)
			}
		}
	})
}
