package baseline

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreNeverRemovesWhatItDidNotCreate is the issue's `baseline
// restore … DST` with DST an existing file: it was deleted and replaced
// by a directory, exit 0.
func TestRestoreNeverRemovesWhatItDidNotCreate(t *testing.T) {
	tmp := t.TempDir()
	s := Store{Dir: filepath.Join(tmp, "cache"), Now: clock()}
	write(t, filepath.Join(tmp, "res", "q2", "run.json"), `{"run_id":"a"}`)
	if _, err := s.Save("dir", filepath.Join(tmp, "res")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save("file", write(t, filepath.Join(tmp, "bench.txt"), "BenchmarkA 1 1 ns/op\n")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, key string
		setup     func(dst string)
		want      error // nil: restored
	}{
		{"dir over a file", "dir", func(dst string) { write(t, dst, "mine") }, ErrDestinationExists},
		{"file over a file", "file", func(dst string) { write(t, dst, "mine") }, ErrDestinationExists},
		{"file over a directory", "file", func(dst string) { write(t, filepath.Join(dst, "x"), "mine") }, ErrDestinationExists},
		{"dir over a symlink", "dir", func(dst string) { os.Symlink(filepath.Join(tmp, "res"), dst) }, ErrDestinationExists},
		{"dir over a non-empty dir", "dir", func(dst string) { write(t, filepath.Join(dst, "x"), "mine") }, ErrDestinationExists},
		{"dir into an empty dir", "dir", func(dst string) { os.Mkdir(dst, 0o755) }, nil},
		{"dir beside an old temp name", "dir", func(dst string) { write(t, dst+".restore-tmp", "mine") }, nil},
		{"file beside an old temp name", "file", func(dst string) { write(t, dst+".tmp", "mine") }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst")
			tc.setup(dst)
			before := snapshot(t, filepath.Dir(dst))
			_, err := s.Restore(tc.key, nil, dst)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Restore = %v, want %v", err, tc.want)
			}
			after := snapshot(t, filepath.Dir(dst))
			for path, content := range before {
				if content != "" && after[path] != content {
					t.Errorf("%s was %q, now %q: restore removed what it did not create", path, content, after[path])
				}
			}
			if err != nil && len(after) != len(before) {
				t.Errorf("a refused restore left files: %v → %v", before, after)
			}
		})
	}
}

// snapshot maps every file and symlink under dir to its content (a
// symlink to its target).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil || d.IsDir():
		case d.Type()&os.ModeSymlink != 0:
			m[path], _ = os.Readlink(path)
			m[path] = "-> " + m[path]
		default:
			b, _ := os.ReadFile(path)
			m[path] = string(b)
		}
		return nil
	})
	return m
}

// TestSymlinkInCacheRefused: a symlink inside a baseline's data/ (even
// one with the right content) was followed on restore.
func TestSymlinkInCacheRefused(t *testing.T) {
	tmp := t.TempDir()
	s := Store{Dir: filepath.Join(tmp, "cache"), Now: clock()}
	src := filepath.Join(tmp, "res")
	write(t, filepath.Join(src, "q2", "run.json"), `{"run_id":"a"}`)
	if _, err := s.Save("k", src); err != nil {
		t.Fatal(err)
	}
	outside := write(t, filepath.Join(tmp, "outside.json"), `{"run_id":"a"}`)
	stored := filepath.Join(s.entryDir("k"), dataDir, "q2", "run.json")
	os.Remove(stored)
	if err := os.Symlink(outside, stored); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(tmp, "restored")
	if _, err := s.Restore("k", nil, dst); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Restore through a symlink = %v, want ErrCorrupt naming the link", err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Fatal("a refused restore left dst")
	}
}

func FuzzLoadManifest(f *testing.F) {
	good := Manifest{Key: "k", Kind: "file", Name: "a", Files: []File{{Path: "a", Size: 1,
		SHA256: "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"}}}
	good.Digest = good.digest()
	b, _ := json.Marshal(good)
	f.Add(b)
	f.Add([]byte(`{"key":"k","kind":"dir","files":[{"path":"../../etc/passwd"}]}`))
	f.Add([]byte(strings.Repeat("[", 100000)))
	f.Add([]byte(`{"key":"k","files":[` + strings.Repeat(`{"path":"a"},`, 1000) + `{}]}`))
	f.Fuzz(func(t *testing.T, manifest []byte) {
		s := Store{Dir: t.TempDir()}
		e := s.entryDir("k")
		os.MkdirAll(filepath.Join(e, dataDir), 0o755)
		os.WriteFile(filepath.Join(e, dataDir, "a"), []byte("a"), 0o644)
		os.WriteFile(filepath.Join(e, manifestName), manifest, 0o644)
		m, err := s.Load("k")
		if err == nil && (m.Key != "k" || len(m.Files) == 0 || m.digest() != m.Digest) {
			t.Fatalf("accepted a bad manifest: %+v", m)
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v is not ErrCorrupt", err)
		}
	})
}
