package tokenizer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// parityModels are the tokenizer.json files testdata/parity/gen.py trains
// with Hugging Face's tokenizers, one per family.
var parityModels = []string{"wordpiece", "unigram", "spbpe", "spbpe_metaspace", "bytebpe", "precompiled"}

// TestParityGolden: on the 10,000 strings of testdata/parity/corpus.jsonl.gz
// (prose, code, CJK, emoji, whitespace runs, random Unicode, decomposed
// accents) each model's IDs have the count and CRC-32 that Hugging Face's
// tokenizers gave (gen.py build): the check that runs without Python.
func TestParityGolden(t *testing.T) {
	texts := parityCorpus(t)
	for _, name := range parityModels {
		t.Run(name, func(t *testing.T) {
			tok := loadParity(t, name)
			want := readLines(t, filepath.Join("testdata", "parity", name+".golden"))
			if len(want) != len(texts) {
				t.Fatalf("%d golden lines for %d texts", len(want), len(texts))
			}
			bad := 0
			for i, s := range texts {
				ids := tok.Encode(s)
				if got := fmt.Sprintf("%d %s", len(ids), idsDigest(ids)); got != want[i] {
					if bad++; bad <= 5 {
						t.Errorf("text %d %q: got %s (%v), want %s", i, s, got, ids, want[i])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d texts differ from tokenizers", bad, len(texts))
			}
		})
	}
}

// TestParityLive: a fresh corpus of 12,000 strings from gen.py (another
// seed than the golden one), encoded by Hugging Face's tokenizers itself
// and by this package: every ID equal. It needs the Python virtualenv
// (SAGEBENCH_TOK_VENV, default ~/.cache/sagebench/tok-venv) and skips
// without it unless SAGEBENCH_REQUIRE_TOKENIZERS=1.
func TestParityLive(t *testing.T) {
	py := venvPython(t)
	script := filepath.Join("testdata", "parity", "gen.py")
	corpus := runPy(t, nil, py, script, "corpus", "20261206", "12000")
	var texts []string
	for _, l := range bytes.Split(bytes.TrimSpace(corpus), []byte("\n")) {
		var x struct{ Text string }
		if err := json.Unmarshal(l, &x); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, x.Text)
	}
	for _, name := range parityModels {
		t.Run(name, func(t *testing.T) {
			tok := loadParity(t, name)
			out := runPy(t, corpus, py, script, "encode", filepath.Join("testdata", "parity", name+".json"))
			lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
			if len(lines) != len(texts) {
				t.Fatalf("%d lines from tokenizers for %d texts", len(lines), len(texts))
			}
			bad := 0
			for i, l := range lines {
				var want []int
				if err := json.Unmarshal(l, &want); err != nil {
					t.Fatal(err)
				}
				if got := tok.Encode(texts[i]); !slices.Equal(got, want) {
					if bad++; bad <= 5 {
						t.Errorf("text %d %q:\n got %v\nwant %v", i, texts[i], got, want)
					}
				}
			}
			t.Logf("%s: %d of %d strings differ", name, bad, len(texts))
			if bad > 0 {
				t.Fail()
			}
		})
	}
}

// venvPython is the virtualenv's python with tokenizers and transformers.
func venvPython(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SAGEBENCH_TOK_VENV")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "sagebench", "tok-venv")
	}
	py := filepath.Join(dir, "bin", "python")
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("SAGEBENCH_REQUIRE_TOKENIZERS") == "1" {
			t.Fatalf("SAGEBENCH_REQUIRE_TOKENIZERS=1 but %s is missing (.ci/run installs it)", py)
		}
		t.Skipf("no Python virtualenv with tokenizers at %s (set SAGEBENCH_TOK_VENV or SAGEBENCH_REQUIRE_TOKENIZERS=1)", dir)
	}
	return py
}

func runPy(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

func loadParity(t *testing.T, name string) Tokenizer {
	t.Helper()
	tok, err := Load(filepath.Join("testdata", "parity", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func parityCorpus(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "parity", "corpus.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var x struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, x.Text)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return texts
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// idsDigest is gen.py's digest: CRC-32 of the IDs as compact JSON.
func idsDigest(ids []int) string {
	var b []byte
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	b = append(b, ']')
	return fmt.Sprintf("%08x", crc32.ChecksumIEEE(b))
}
