package baseline

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clock returns a Now that advances one minute per call.
func clock() func() time.Time {
	t := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Minute); return t }
}

func write(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSaveRestoreFile(t *testing.T) {
	tmp := t.TempDir()
	s := Store{Dir: filepath.Join(tmp, "cache"), Now: clock()}
	src := write(t, filepath.Join(tmp, "bench.txt"), "BenchmarkA 1 1 ns/op\n")
	if _, err := s.Save("gobench-main-aaa", src); err != nil {
		t.Fatal(err)
	}
	write(t, src, "BenchmarkA 1 2 ns/op\n")
	if _, err := s.Save("gobench-main-bbb", src); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		key      string
		prefixes []string
		want     string
		wantErr  error
	}{
		{"exact", "gobench-main-aaa", nil, "1 ns/op", nil},
		{"newest by prefix", "gobench-pr-123", []string{"gobench-main-"}, "2 ns/op", nil},
		{"second prefix", "x", []string{"nothing-", "gobench-"}, "2 ns/op", nil},
		{"not found", "gobench-pr-123", []string{"other-"}, "", ErrNotFound},
		{"not found without prefixes", "nope", nil, "", ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out", "base.txt")
			m, err := s.Restore(tc.key, tc.prefixes, dst)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if _, serr := os.Stat(dst); serr == nil {
					t.Fatal("a failed restore left a file")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := read(t, dst); !strings.Contains(got, tc.want) || m.Kind != "file" {
				t.Fatalf("restored %q (%+v)", got, m)
			}
		})
	}
}

func TestSaveRestoreDir(t *testing.T) {
	tmp := t.TempDir()
	s := Store{Dir: filepath.Join(tmp, "cache"), Now: clock()}
	src := filepath.Join(tmp, "results")
	write(t, filepath.Join(src, "q2", "run1", "run.json"), `{"run_id":"a"}`)
	write(t, filepath.Join(src, "q2", "run1", "bench.txt"), "BenchmarkA 1 1 ns/op\n")
	m, err := s.Save("refs/heads/main", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 2 || m.Kind != "dir" {
		t.Fatalf("manifest %+v", m)
	}
	dst := filepath.Join(tmp, "restored")
	if _, err := s.Restore("refs/heads/main", nil, dst); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dst, "q2", "run1", "run.json")); got != `{"run_id":"a"}` {
		t.Fatalf("restored %q", got)
	}
	if _, err := s.Restore("refs/heads/main", nil, dst); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore over a non-empty dir: %v", err)
	}
	entries, err := s.List()
	if err != nil || len(entries) != 1 || entries[0].Key != "refs/heads/main" {
		t.Fatalf("list %+v %v", entries, err)
	}
}

// TestIntegrity: every way of damaging a stored baseline is rejected.
func TestIntegrity(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, entry string)
		want   string
	}{
		{"truncated data", func(t *testing.T, e string) {
			write(t, filepath.Join(e, "data", "bench.txt"), "Bench")
		}, "truncated or edited"},
		{"edited data same size", func(t *testing.T, e string) {
			write(t, filepath.Join(e, "data", "bench.txt"), "BenchmarkA 1 9 ns/op\n")
		}, "sha256"},
		{"deleted data", func(t *testing.T, e string) {
			os.Remove(filepath.Join(e, "data", "bench.txt"))
		}, "no such file"},
		{"truncated manifest", func(t *testing.T, e string) {
			b := read(t, filepath.Join(e, "manifest.json"))
			write(t, filepath.Join(e, "manifest.json"), b[:len(b)/2])
		}, "manifest unreadable"},
		// A manifest edited consistently (digest recomputed: it is a
		// checksum, not a signature) must still describe data/ exactly.
		{"re-digested manifest listing no files", func(t *testing.T, e string) {
			redigest(t, e, func(m *Manifest) { m.Files = nil })
		}, "lists no files"},
		{"re-digested manifest of unknown kind", func(t *testing.T, e string) {
			redigest(t, e, func(m *Manifest) { m.Kind = "tarball" })
		}, "kind"},
		{"re-digested manifest listing a file twice", func(t *testing.T, e string) {
			redigest(t, e, func(m *Manifest) { m.Kind = "dir"; m.Files = append(m.Files, m.Files[0]) })
		}, "listed twice"},
		{"unlisted file in data", func(t *testing.T, e string) {
			write(t, filepath.Join(e, "data", "run", "run.json"), "{}")
		}, "not in the manifest"},
		{"edited manifest", func(t *testing.T, e string) {
			b := read(t, filepath.Join(e, "manifest.json"))
			write(t, filepath.Join(e, "manifest.json"), strings.Replace(b, `"size": 21`, `"size": 5`, 1))
		}, "manifest digest mismatch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			s := Store{Dir: filepath.Join(tmp, "cache"), Now: clock()}
			src := write(t, filepath.Join(tmp, "bench.txt"), "BenchmarkA 1 1 ns/op\n")
			if _, err := s.Save("k", src); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, s.entryDir("k"))
			dst := filepath.Join(tmp, "out.txt")
			_, err := s.Restore("k", []string{"k"}, dst)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrCorrupt with %q", err, tc.want)
			}
			if _, serr := os.Stat(dst); serr == nil {
				t.Fatal("a rejected baseline was restored")
			}
			entries, _ := s.List()
			if len(entries) != 1 || entries[0].Err == nil {
				t.Fatalf("list does not flag the damage: %+v", entries)
			}
		})
	}
}

// redigest rewrites the manifest of entry e with edit applied and a
// recomputed digest.
func redigest(t *testing.T, e string, edit func(*Manifest)) {
	t.Helper()
	var m Manifest
	if err := json.Unmarshal([]byte(read(t, filepath.Join(e, "manifest.json"))), &m); err != nil {
		t.Fatal(err)
	}
	edit(&m)
	m.Digest = m.digest()
	b, _ := json.Marshal(m)
	write(t, filepath.Join(e, "manifest.json"), string(b))
}

func TestPrefixSkipsCorrupt(t *testing.T) {
	tmp := t.TempDir()
	s := Store{Dir: filepath.Join(tmp, "cache"), Now: clock()}
	src := write(t, filepath.Join(tmp, "bench.txt"), "old\n")
	s.Save("main-1", src)
	write(t, src, "new\n")
	s.Save("main-2", src)
	write(t, filepath.Join(s.entryDir("main-2"), "data", "bench.txt"), "NEW\n")
	dst := filepath.Join(tmp, "out.txt")
	m, err := s.Restore("", []string{"main-"}, dst)
	if err != nil || m.Key != "main-1" || read(t, dst) != "old\n" {
		t.Fatalf("restored %v %v", m, err)
	}
}

func TestKeys(t *testing.T) {
	for _, k := range []string{"", strings.Repeat("x", 201), "a\nb"} {
		if err := ValidateKey(k); err == nil {
			t.Errorf("key %q accepted", k)
		}
	}
	for _, k := range []string{"..", "../x", "refs/heads/main", "a b%c", "gobench-Linux-abc123"} {
		e := escapeKey(k)
		if strings.ContainsAny(e, "/.") || e == "" {
			t.Errorf("escapeKey(%q) = %q", k, e)
		}
		if u, err := unescapeKey(e); err != nil || u != k {
			t.Errorf("unescapeKey(%q) = %q, %v", e, u, err)
		}
	}
}

func TestSaveErrors(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if _, err := s.Save("k", filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing source saved")
	}
	if _, err := s.Save("k", t.TempDir()); err == nil || !strings.Contains(err.Error(), "holds no files") {
		t.Fatalf("empty dir: %v", err)
	}
	if _, err := s.Save("", "x"); err == nil {
		t.Fatal("empty key accepted")
	}
}
