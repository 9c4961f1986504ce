package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHostileDocNamesRealTests: every test, fuzz target and benchmark
// docs/hostile.md names as holding a promise exists, so that a promise
// cannot outlive the test it cites.
func TestHostileDocNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "hostile.md"))
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)\w+)\(`)
	filepath.WalkDir(filepath.Join("..", ".."), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, _ := os.ReadFile(path)
			for _, m := range decl.FindAllSubmatch(b, -1) {
				funcs[string(m[1])] = true
			}
		}
		return nil
	})
	named := regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Z]\\w*)`").FindAllSubmatch(doc, -1)
	if len(named) < 20 {
		t.Fatalf("hostile.md names %d tests; the pattern no longer finds them", len(named))
	}
	for _, m := range named {
		if !funcs[string(m[1])] {
			t.Errorf("docs/hostile.md names %s, which no test file declares", m[1])
		}
	}
}
