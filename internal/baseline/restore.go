package baseline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// ErrDestinationExists is the error of a restore whose destination is
// already taken (a usage error: restore never removes what it did not
// create).
var ErrDestinationExists = errors.New("restore destination already exists")

// Restore finds a baseline like Find and copies it to dst: the saved file
// to the path dst, or the saved directory's content into the directory
// dst (created, or an existing empty directory). Anything else at dst (a
// file, a symlink, a directory with entries) is ErrDestinationExists and
// is left untouched. The copy is verified again while written; nothing is
// left at dst on failure.
func (s Store) Restore(key string, prefixes []string, dst string) (*Manifest, error) {
	m, err := s.Find(key, prefixes)
	if err != nil {
		return nil, err
	}
	if err := checkDestination(dst, m.Kind); err != nil {
		return nil, err
	}
	src := filepath.Join(s.entryDir(m.Key), dataDir)
	if m.Kind == "file" {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, fmt.Errorf("restoring baseline: %w", err)
		}
		return m, restoreFile(filepath.Join(src, filepath.FromSlash(m.Files[0].Path)), dst, m.Files[0])
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dst)), 0o755); err != nil {
		return nil, fmt.Errorf("restoring baseline: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dst)), "."+filepath.Base(dst)+".restore-")
	if err != nil {
		return nil, fmt.Errorf("restoring baseline: %w", err)
	}
	defer os.RemoveAll(tmp) // ours; empty after a successful rename
	for _, f := range m.Files {
		if err := restoreFile(filepath.Join(src, filepath.FromSlash(f.Path)), filepath.Join(tmp, filepath.FromSlash(f.Path)), f); err != nil {
			return nil, err
		}
	}
	// rename(2) itself replaces an empty directory and fails on anything
	// else (os.Rename refuses any existing directory).
	if err := syscall.Rename(tmp, dst); err != nil {
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("%w: %s appeared while restoring", ErrDestinationExists, dst)
		}
		return nil, fmt.Errorf("restoring baseline: rename %s: %w", dst, err)
	}
	return m, nil
}

// checkDestination refuses a dst that restore would have to remove.
func checkDestination(dst, kind string) error {
	fi, err := os.Lstat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("restoring baseline: %w", err)
	case kind == "dir" && fi.IsDir():
		if des, err := os.ReadDir(dst); err != nil || len(des) > 0 {
			return fmt.Errorf("%w: %s is a directory that is not empty; remove it or choose another DEST", ErrDestinationExists, dst)
		}
		return nil
	}
	return fmt.Errorf("%w: %s is a %s; remove it or choose another DEST", ErrDestinationExists, dst, typeName(fi.Mode()))
}

func typeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsRegular():
		return "file"
	}
	return "special file"
}

// restoreFile copies src to dst through a temporary file of ours and
// checks the copy against the manifest. dst must not exist: the copy is
// linked into place, which fails rather than replace a file that appeared
// meanwhile.
func restoreFile(src, dst string, want File) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("restoring baseline: %w", err)
	}
	out, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-")
	if err != nil {
		return fmt.Errorf("restoring baseline: %w", err)
	}
	tmp := out.Name()
	defer os.Remove(tmp)
	got, err := copyInto(src, out)
	if err == nil && (got.Size != want.Size || got.SHA256 != want.SHA256) {
		err = fmt.Errorf("%w: %s changed while restoring", ErrCorrupt, want.Path)
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Link(tmp, dst)
		if errors.Is(err, fs.ErrExist) {
			err = fmt.Errorf("%w: %s appeared while restoring", ErrDestinationExists, dst)
		}
	}
	if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrDestinationExists) && !errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("restoring baseline: %w", err)
	}
	return err
}
