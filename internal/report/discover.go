package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// maxRunDirs bounds the run directories one report reads.
const maxRunDirs = 500

// ErrNoRuns is returned when a directory holds no run directory.
var ErrNoRuns = errors.New("no run directory found")

// isRunDir reports whether dir holds a run.json.
func isRunDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "run.json"))
	return err == nil && st.Mode().IsRegular()
}

// Discover expands each directory that is not itself a run (no
// run.json) into the run directories under it (a results root:
// OUT/<q>/<run-id>/), in natural order; aggregate directories are
// listed apart. A directory with neither runs nor files of a run
// (requests.jsonl) is an error naming it.
func Discover(dirs []string) (runs, aggregates []string, err error) {
	for _, d := range dirs {
		switch {
		case isRunDir(d):
			runs = append(runs, d)
		case isAggregateDir(d):
			aggregates = append(aggregates, d)
		case hasRunFiles(d):
			runs = append(runs, d) // a damaged run: drawn with its problems
		default:
			found, aggs, err := walkRuns(d)
			if err != nil {
				return nil, nil, err
			}
			if len(found) == 0 && len(aggs) == 0 {
				return nil, nil, fmt.Errorf("%s: %w (want a run directory holding run.json, or a results root such as results/ with <q>/<run-id>/ under it)", d, ErrNoRuns)
			}
			runs, aggregates = append(runs, found...), append(aggregates, aggs...)
		}
		if len(runs) > maxRunDirs {
			return nil, nil, fmt.Errorf("more than %d run directories: name fewer (e.g. results/q2)", maxRunDirs)
		}
	}
	return runs, aggregates, nil
}

// hasRunFiles reports a directory with the files a run writes besides
// run.json.
func hasRunFiles(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "requests.jsonl"))
	return err == nil
}

// walkRuns finds the run and aggregate directories under root (at most
// three levels down).
func walkRuns(root string) (runs, aggregates []string, err error) {
	depth := strings.Count(filepath.Clean(root), string(filepath.Separator))
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == root {
			return nil
		}
		switch {
		case isRunDir(p):
			runs = append(runs, p)
			return fs.SkipDir
		case isAggregateDir(p):
			aggregates = append(aggregates, p)
			return fs.SkipDir
		case strings.Count(filepath.Clean(p), string(filepath.Separator))-depth >= 3:
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", root, err)
	}
	sort.Slice(runs, func(i, j int) bool { return naturalLess(runs[i], runs[j]) })
	sort.Strings(aggregates)
	return runs, aggregates, nil
}
