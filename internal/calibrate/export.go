package calibrate

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Tools are the exports the grader reads, by --tool name.
var toolReaders = map[string]func(path string) (Export, error){
	"sagebench":      readSagebench,
	"sagebench-sent": readSagebenchSent,
	"aiperf":         readAIPerf,
	"guidellm":       readGuideLLM,
	"inference-perf": readInferencePerf,
	"genai-bench":    readGenAIBench,
}

// Tools lists the tool names ReadExport knows.
func Tools() []string {
	var out []string
	for k := range toolReaders {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// UnknownToolError is a --tool the grader has no reader for.
type UnknownToolError struct{ Tool string }

func (e *UnknownToolError) Error() string {
	return fmt.Sprintf("unknown tool %q: choose one of %s", e.Tool, strings.Join(Tools(), ", "))
}

// ReadExport reads tool's native export at path (a file or the
// directory the tool wrote; see docs/fidelity.md for which file).
func ReadExport(tool, path string) (Export, error) {
	read, ok := toolReaders[tool]
	if !ok {
		return Export{}, &UnknownToolError{Tool: tool}
	}
	e, err := read(path)
	if err != nil {
		return Export{}, fmt.Errorf("%s export %s: %w", tool, path, err)
	}
	e.Tool = tool
	return e, nil
}

// MaxExportBytes bounds any one export file the grader reads.
const MaxExportBytes = 512 << 20

// readBounded reads a file of at most MaxExportBytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxExportBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxExportBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", path, MaxExportBytes>>20)
	}
	return b, nil
}

// findFile is path itself when it is a file, else the first match of
// each pattern under the directory path (searched recursively, in
// lexical order).
func findFile(path string, patterns ...string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return path, nil
	}
	for _, p := range patterns {
		var found string
		filepath.WalkDir(path, func(q string, d os.DirEntry, err error) error {
			if err != nil || found != "" || d.IsDir() {
				return nil
			}
			if ok, _ := filepath.Match(p, d.Name()); ok {
				found = q
			}
			return nil
		})
		if found != "" {
			return found, nil
		}
	}
	return "", fmt.Errorf("no %s under %s", strings.Join(patterns, " or "), path)
}

func decodeFile(path string, v any) error {
	b, err := readBounded(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
