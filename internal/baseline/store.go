package baseline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Store is a directory of baselines. Now defaults to time.Now.
type Store struct {
	Dir string
	Now func() time.Time
}

// Manifest describes one stored baseline.
type Manifest struct {
	Key     string    `json:"key"`
	Created time.Time `json:"created"`
	Kind    string    `json:"kind"` // "file" or "dir": what was saved
	Name    string    `json:"name"` // base name of the saved path
	Files   []File    `json:"files"`
	Digest  string    `json:"digest"` // SHA-256 of this manifest with Digest empty
}

// File is one stored file, path relative to data/ with forward slashes.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Errors callers branch on.
var (
	ErrNotFound = errors.New("no baseline found")
	ErrCorrupt  = errors.New("baseline failed its integrity check")
)

const (
	maxManifest  = 16 << 20 // bytes of manifest.json read at most
	manifestName = "manifest.json"
	dataDir      = "data"
)

// ValidateKey reports a key that cannot name a baseline.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return errors.New("baseline key is empty")
	case len(key) > 200:
		return fmt.Errorf("baseline key is %d bytes long (max 200)", len(key))
	case strings.ContainsAny(key, "\x00\n\r"):
		return fmt.Errorf("baseline key %q holds a control character", key)
	}
	return nil
}

// escapeKey maps a key to one safe path element: [A-Za-z0-9_-] stay, any
// other byte becomes %XX (so "..", "/" and "." cannot escape the store).
func escapeKey(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func (s Store) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s Store) entryDir(key string) string { return filepath.Join(s.Dir, escapeKey(key)) }

// digest computes the manifest's own digest.
func (m Manifest) digest() string {
	m.Digest = ""
	b, _ := json.Marshal(m)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Save stores the file or directory src under key, replacing a baseline
// already stored under that key.
func (s Store) Save(key, src string) (*Manifest, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("saving baseline: %w", err)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("saving baseline: %w", err)
	}
	tmp, err := os.MkdirTemp(s.Dir, ".save-")
	if err != nil {
		return nil, fmt.Errorf("saving baseline: %w", err)
	}
	defer os.RemoveAll(tmp)
	m := &Manifest{Key: key, Created: s.now(), Kind: "file", Name: filepath.Base(src)}
	if fi.IsDir() {
		m.Kind = "dir"
	}
	if m.Files, err = copyTree(src, filepath.Join(tmp, dataDir), fi.IsDir()); err != nil {
		return nil, fmt.Errorf("saving baseline: %w", err)
	}
	if len(m.Files) == 0 {
		return nil, fmt.Errorf("saving baseline: %s holds no files", src)
	}
	m.Digest = m.digest()
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, manifestName), b, 0o644); err != nil {
		return nil, fmt.Errorf("saving baseline: %w", err)
	}
	if err := replaceDir(tmp, s.entryDir(key)); err != nil {
		return nil, fmt.Errorf("saving baseline: %w", err)
	}
	return m, nil
}

// replaceDir moves src to dst, replacing dst if it exists.
func replaceDir(src, dst string) error {
	old := dst + ".old"
	os.RemoveAll(old)
	if err := os.Rename(dst, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		os.Rename(old, dst)
		return err
	}
	return os.RemoveAll(old)
}

// copyTree copies src (a file, or a directory when dir) to dst and returns
// the files with their sizes and hashes.
func copyTree(src, dst string, dir bool) ([]File, error) {
	if !dir {
		f, err := copyFile(src, filepath.Join(dst, filepath.Base(src)))
		if err != nil {
			return nil, err
		}
		f.Path = filepath.Base(src)
		return []File{f}, nil
	}
	var files []File
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		f, err := copyFile(path, filepath.Join(dst, rel))
		if err != nil {
			return err
		}
		f.Path = filepath.ToSlash(rel)
		files = append(files, f)
		return nil
	})
	return files, err
}

// copyFile copies src to dst (creating parents) and hashes what it wrote.
func copyFile(src, dst string) (File, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return File{}, err
	}
	out, err := os.Create(dst)
	if err != nil {
		return File{}, err
	}
	return copyInto(src, out)
}

// copyInto copies the regular file src into out (closed after) and hashes
// what it wrote. src must not be a symbolic link.
func copyInto(src string, out *os.File) (File, error) {
	in, err := openRegular(src)
	if err != nil {
		out.Close()
		return File{}, err
	}
	defer in.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return File{}, err
	}
	return File{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// openRegular opens path for reading without following a final symbolic
// link, and refuses anything but a regular file (a FIFO would block, a
// device never end).
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symbolic link (refused)", path)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (refused)", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Load reads and verifies the baseline stored under key.
func (s Store) Load(key string) (*Manifest, error) {
	dir := s.entryDir(key)
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%w: key %q: %s is a %s, not a directory (refused)", ErrCorrupt, key, dir, typeName(fi.Mode()))
	}
	mf, err := openRegular(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w for key %q in %s", ErrNotFound, key, s.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: key %q: %v", ErrCorrupt, key, err)
	}
	defer mf.Close()
	b, err := io.ReadAll(io.LimitReader(mf, maxManifest+1))
	if err == nil && len(b) > maxManifest {
		return nil, fmt.Errorf("%w: key %q: manifest larger than %d bytes", ErrCorrupt, key, maxManifest)
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: key %q: manifest unreadable: %v", ErrCorrupt, key, err)
	}
	if err := verify(&m, dir, key); err != nil {
		return nil, err
	}
	return &m, nil
}

func verify(m *Manifest, dir, key string) error {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: key %q: %s", ErrCorrupt, key, fmt.Sprintf(format, args...))
	}
	if m.Key != key {
		return corrupt("manifest names key %q", m.Key)
	}
	if m.Digest == "" || m.digest() != m.Digest {
		return corrupt("manifest digest mismatch (manifest edited)")
	}
	// The digest is a checksum anyone can recompute: the manifest must
	// also be well formed and describe data/ exactly.
	switch {
	case len(m.Files) == 0:
		return corrupt("manifest lists no files")
	case m.Kind != "file" && m.Kind != "dir":
		return corrupt("manifest kind %q is neither file nor dir", m.Kind)
	case m.Kind == "file" && len(m.Files) != 1:
		return corrupt("manifest of kind file lists %d files", len(m.Files))
	}
	listed := map[string]bool{}
	for _, f := range m.Files {
		path := filepath.Join(dir, dataDir, filepath.FromSlash(f.Path))
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return corrupt("file path %q leaves the baseline", f.Path)
		}
		if listed[f.Path] {
			return corrupt("file %q listed twice", f.Path)
		}
		listed[f.Path] = true
		got, err := hashFile(path)
		switch {
		case err != nil:
			return corrupt("%s: %v", f.Path, err)
		case got.Size != f.Size:
			return corrupt("%s is %d bytes, manifest says %d (truncated or edited)", f.Path, got.Size, f.Size)
		case got.SHA256 != f.SHA256:
			return corrupt("%s sha256 %s, manifest says %s (edited)", f.Path, got.SHA256, f.SHA256)
		}
	}
	return unlisted(filepath.Join(dir, dataDir), listed, corrupt)
}

// unlisted reports the first file under data that the manifest does not
// list: an added run would otherwise sit in the cache unverified.
func unlisted(data string, listed map[string]bool, corrupt func(string, ...any) error) error {
	return filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return corrupt("%v", err)
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return corrupt("%s is a %s in data/, not a regular file (refused)", path, typeName(d.Type()))
		}
		rel, err := filepath.Rel(data, path)
		if err != nil {
			return corrupt("%v", err)
		}
		if !listed[filepath.ToSlash(rel)] {
			return corrupt("%s is in data/ but not in the manifest (added or manifest edited)", filepath.ToSlash(rel))
		}
		return nil
	})
}

func hashFile(path string) (File, error) {
	f, err := openRegular(path)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return File{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, err
}

// Entry is one baseline as List sees it: its manifest or why it is unusable.
type Entry struct {
	Key      string
	Manifest *Manifest
	Err      error
}

// List returns every baseline in the store, newest first; corrupt ones
// carry their error.
func (s Store) List() ([]Entry, error) {
	des, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing baselines: %w", err)
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() || strings.HasPrefix(de.Name(), ".") || strings.HasSuffix(de.Name(), ".old") {
			continue
		}
		key, err := unescapeKey(de.Name())
		if err != nil {
			out = append(out, Entry{Key: de.Name(), Err: fmt.Errorf("%w: %v", ErrCorrupt, err)})
			continue
		}
		m, err := s.Load(key)
		out = append(out, Entry{Key: key, Manifest: m, Err: err})
	}
	sort.SliceStable(out, func(i, j int) bool {
		ti, tj := created(out[i]), created(out[j])
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return out[i].Key > out[j].Key
	})
	return out, nil
}

func created(e Entry) time.Time {
	if e.Manifest == nil {
		return time.Time{}
	}
	return e.Manifest.Created
}

func unescapeKey(name string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if name[i] != '%' {
			b.WriteByte(name[i])
			continue
		}
		if i+2 >= len(name) {
			return "", fmt.Errorf("bad escape in %q", name)
		}
		v, err := hex.DecodeString(name[i+1 : i+3])
		if err != nil {
			return "", fmt.Errorf("bad escape in %q", name)
		}
		b.WriteByte(v[0])
		i += 2
	}
	return b.String(), nil
}
