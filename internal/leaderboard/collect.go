package leaderboard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/sagebench/sagebench/internal/record"
)

// maxFiles bounds how many unified_results.jsonl files one walk reads.
const maxFiles = 10000

// Row is one run as the leaderboard sees it.
type Row struct {
	record.Unified
	Valid   bool     `json:"valid"`
	Reasons []string `json:"invalid_reasons,omitempty"`
	File    string   `json:"file"`
}

// Collection is every distinct run found, and what could not be read.
type Collection struct {
	Rows       []Row
	Duplicates int      // rows dropped because their run_id was seen before
	Problems   []string // unreadable lines and files
}

// Collect reads every unified_results.jsonl under root (or root itself
// when it is that file). The first row of a run_id wins; later ones are
// counted as duplicates (the same run appended twice, or a results tree
// copied into another).
func Collect(root string) (*Collection, error) {
	files, err := findFiles(root)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no %s (sagebench run --output-dir DIR writes it)", root, record.UnifiedJSONL)
	}
	c := &Collection{}
	seen := map[string]bool{}
	for _, f := range files {
		err := readFile(f, func(u record.Unified) {
			if seen[u.RunID] {
				c.Duplicates++
				return
			}
			seen[u.RunID] = true
			c.Rows = append(c.Rows, rowOf(u, f))
		})
		for _, e := range splitJoined(err) {
			c.Problems = append(c.Problems, e.Error())
		}
	}
	return c, nil
}

func findFiles(root string) ([]string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if !st.IsDir() {
		return []string{root}, nil
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == record.UnifiedJSONL {
			files = append(files, p)
			if len(files) > maxFiles {
				return fmt.Errorf("more than %d %s files under %s", maxFiles, record.UnifiedJSONL, root)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", root, err)
	}
	sort.Strings(files)
	return files, nil
}

func readFile(path string, each func(record.Unified)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	return record.ReadUnified(f, path, func(_ int, u record.Unified) { each(u) })
}

// rowOf reads validity from metadata.valid and metadata.complete (as
// sagebench writes them); a row without them is invalid: its validity is
// not known.
func rowOf(u record.Unified, file string) Row {
	r := Row{Unified: u, File: file}
	valid, okV := u.Metadata["valid"].(bool)
	complete, okC := u.Metadata["complete"].(bool)
	switch {
	case !okV || !okC:
		r.Reasons = []string{"validity not recorded (no metadata.valid and metadata.complete)"}
	case !complete:
		r.Reasons = []string{"run did not complete"}
	}
	if reasons, ok := u.Metadata["invalid_reasons"].([]any); ok {
		for _, x := range reasons {
			r.Reasons = append(r.Reasons, fmt.Sprint(x))
		}
	}
	r.Valid = okV && okC && valid && complete
	if !r.Valid && len(r.Reasons) == 0 {
		r.Reasons = []string{"marked invalid"}
	}
	return r
}

func splitJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
