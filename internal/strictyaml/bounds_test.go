package strictyaml

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	deep := func(open, close string, n int) string {
		return "q2:\n  schedule: " + strings.Repeat(open, n) + strings.Repeat(close, n) + "\n"
	}
	block := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(strings.Repeat(" ", i) + "k:\n")
		}
		return b.String()
	}
	tests := []struct {
		name string
		yaml string
		want error // nil = accepted
	}{
		{"ordinary config", "q2:\n  policies: [fifo, edf]\n  schedule:\n    - {at: 1s, rate: [1, 2]}\n", nil},
		{"flow 60 deep", deep("[", "]", 60), nil},
		{"flow 100k deep", deep("[", "]", 100_000), ErrTooDeep},
		{"flow maps 100k deep", deep("{a: ", "}", 100_000), ErrTooDeep},
		{"flow unclosed 100k", "a: " + strings.Repeat("[", 100_000), ErrTooDeep},
		{"compact sequences 100k", strings.Repeat("- ", 100_000) + "x\n", ErrTooDeep},
		{"block mappings 2k", block(2000), ErrTooDeep},
		{"block mappings 30", block(30), nil},
		{"brackets in quotes", "a: '" + strings.Repeat("[", 1000) + "'\nb: \"" + strings.Repeat("{", 1000) + "\"\n", nil},
		{"brackets in comments", "a: 1 # " + strings.Repeat("[", 1000) + "\n# " + strings.Repeat("[", 1000) + "\n", nil},
		{"brackets in a block scalar", "a: |\n  " + strings.Repeat("[", 1000) + "\n  more\nb: 1\n", nil},
		{"brackets in a plain scalar", "a: x" + strings.Repeat("[", 1000) + "\n", nil},
		{"multi-line quote", "a: \"x\n  " + strings.Repeat("[", 1000) + "\"\nb: [1]\n", nil},
		{"anchor before flow", "a: &x " + strings.Repeat("[", 100) + "\n", ErrTooDeep},
		{"NUL bytes", "a: 1\x00\x00", ErrBinary},
		{"too large", "a: '" + strings.Repeat("x", MaxBytes) + "'\n", ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.yaml))
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Check = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestUnmarshalDeepNesting is the 100k-deep `q2: schedule: [[[[…` of
// issue 11: before the bounds, goccy/go-yaml took ~19.5 GB and minutes.
func TestUnmarshalDeepNesting(t *testing.T) {
	var v struct {
		Q2 struct {
			Schedule any `yaml:"schedule"`
		} `yaml:"q2"`
	}
	doc := "q2:\n  schedule: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "\n"
	if err := Unmarshal([]byte(doc), &v); !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("Unmarshal = %v, want ErrTooDeep at line 2", err)
	}
}

func TestParse(t *testing.T) {
	if _, err := Parse([]byte("a: " + strings.Repeat("[", 100_000))); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("Parse of a 100k-deep document = %v, want ErrTooDeep", err)
	}
	f, err := Parse([]byte("a: [1, 2]\n# c\n"))
	if err != nil || len(f.Docs) != 1 {
		t.Fatalf("Parse = %v, %v", f, err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.yaml")
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(ok, []byte("a: 1\n"), 0o644)
	os.WriteFile(big, make([]byte, MaxBytes+10), 0o644)
	tests := []struct {
		name, path string
		want       error
	}{
		{"small file", ok, nil},
		{"over the cap", big, ErrTooLarge},
		{"endless /dev/zero", "/dev/zero", ErrTooLarge},
		{"missing", filepath.Join(dir, "nope"), os.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.path); tc.path == "/dev/zero" && err != nil {
				t.Skip("no /dev/zero")
			}
			b, err := ReadFile(tc.path)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("ReadFile = %d bytes, %v; want %v", len(b), err, tc.want)
			}
		})
	}
}

// TestCheckRepositoryYAML keeps every YAML file of the repository within
// the bounds, so that the caps never refuse a real config.
func TestCheckRepositoryYAML(t *testing.T) {
	var n int
	filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if err := Check(b); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		return nil
	})
	if n == 0 {
		t.Fatal("found no YAML file in the repository")
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte("a: [1, {b: 'x]'}]\n- - c\n"))
	f.Add([]byte("a: \"x\n [\"\nb: |\n  [[\n"))
	f.Add([]byte(strings.Repeat("[", 200)))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Check(data)
		if err == nil && len(data) > MaxBytes {
			t.Fatal("oversized document accepted")
		}
	})
}
