package baseline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Find returns the verified baseline for key, or else the newest intact
// baseline whose key starts with one of prefixes, tried in order. A
// baseline stored under the exact key that fails its check is an error,
// not a reason to fall back.
func (s Store) Find(key string, prefixes []string) (*Manifest, error) {
	if key != "" {
		m, err := s.Load(key)
		if err == nil || !errors.Is(err, ErrNotFound) {
			return m, err
		}
	}
	if len(prefixes) == 0 {
		return nil, fmt.Errorf("%w for key %q in %s", ErrNotFound, key, s.Dir)
	}
	entries, err := s.List()
	if err != nil {
		return nil, err
	}
	var skipped []string
	for _, p := range prefixes {
		for _, e := range entries { // newest first
			if !strings.HasPrefix(e.Key, p) {
				continue
			}
			if e.Err != nil {
				skipped = append(skipped, e.Err.Error())
				continue
			}
			return e.Manifest, nil
		}
	}
	rejected := ""
	if len(skipped) > 0 {
		rejected = "; rejected: " + strings.Join(skipped, "; ")
	}
	return nil, fmt.Errorf("%w for key %q or prefixes %q in %s%s", ErrNotFound, key, prefixes, s.Dir, rejected)
}

// Restore finds a baseline like Find and copies it to dst: the saved file
// to the path dst, or the saved directory's content into the directory
// dst (created; it must not hold files already). The copy is verified
// again while written; nothing is left at dst on failure.
func (s Store) Restore(key string, prefixes []string, dst string) (*Manifest, error) {
	m, err := s.Find(key, prefixes)
	if err != nil {
		return nil, err
	}
	src := filepath.Join(s.entryDir(m.Key), dataDir)
	if m.Kind == "file" {
		return m, restoreFile(filepath.Join(src, filepath.FromSlash(m.Files[0].Path)), dst, m.Files[0])
	}
	if des, err := os.ReadDir(dst); err == nil && len(des) > 0 {
		return nil, fmt.Errorf("restoring baseline: %s exists and is not empty", dst)
	}
	tmp := dst + ".restore-tmp"
	os.RemoveAll(tmp)
	for _, f := range m.Files {
		if err := restoreFile(filepath.Join(src, filepath.FromSlash(f.Path)), filepath.Join(tmp, filepath.FromSlash(f.Path)), f); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
	}
	os.Remove(dst) // an empty directory only
	if err := os.Rename(tmp, dst); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("restoring baseline: %w", err)
	}
	return m, nil
}

// restoreFile copies src to dst through a temporary file and checks the
// copy against the manifest.
func restoreFile(src, dst string, want File) error {
	tmp := dst + ".tmp"
	got, err := copyFile(src, tmp)
	if err == nil && (got.Size != want.Size || got.SHA256 != want.SHA256) {
		err = fmt.Errorf("%w: %s changed while restoring", ErrCorrupt, want.Path)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("restoring baseline: %w", err)
		}
		return err
	}
	return nil
}
