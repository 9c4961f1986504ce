package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/tokenizer"
)

// TestLoadSynthRefusesAnotherFile: a node refuses a tokenizer.json that
// is missing on it or differs from the coordinator's, naming the fix,
// and builds an embedded vocabulary's synthesizer by name.
func TestLoadSynthRefusesAnotherFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, []byte(`{"model":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, spec, sum, want string
	}{
		{"missing", filepath.Join(t.TempDir(), "none.json"), "", "not on this worker"},
		{"different", path, strings.Repeat("ab", 32), "differs from the coordinator's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadSynth(tc.spec, tc.sum)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "every worker") {
				t.Fatalf("loadSynth(%s) = %v, want an error saying %q and the fix", tc.spec, err, tc.want)
			}
		})
	}
	s, err := loadSynth(tokenizer.O200K, "")
	if err != nil || s.Tokenizer().Name() != tokenizer.O200K {
		t.Fatalf("loadSynth(o200k_base) = %v, %v", s, err)
	}
}
