package record

import (
	"fmt"
	"path/filepath"
	"strings"
)

// File is an extra record file a workload writes into its run directory,
// e.g. a drill's events.jsonl and windows.jsonl.
type File struct {
	Name string // a plain file name, no directory
	Data []byte
}

// reserved are the run directory's own files, which a workload may not write.
var reserved = []string{"run.json", "requests.jsonl", "summary.md", "bench.txt"}

// WriteFiles writes each file atomically into dir.
func WriteFiles(dir string, files []File) error {
	for _, f := range files {
		if f.Name == "" || f.Name != filepath.Base(f.Name) || strings.HasPrefix(f.Name, ".") {
			return fmt.Errorf("record file %q: want a plain file name", f.Name)
		}
		for _, r := range reserved {
			if f.Name == r {
				return fmt.Errorf("record file %q: reserved by the run directory", f.Name)
			}
		}
		if err := WriteFileAtomic(filepath.Join(dir, f.Name), f.Data); err != nil {
			return err
		}
	}
	return nil
}
