package record

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Unified output file names under the output root.
const (
	UnifiedJSONL = "unified_results.jsonl"
	UnifiedCSV   = "unified_results.csv"
)

// UnifiedColumns is the CSV header of unified_results.csv, in the order of
// the original Python benchmark_sage. metadata is a JSON string column.
var UnifiedColumns = []string{
	"backend", "workload", "run_id", "seed", "nodes", "parallelism",
	"throughput", "latency_p50", "latency_p95", "latency_p99", "success_rate",
	"duration_seconds", "timestamp", "config_hash", "backend_hash", "metadata",
	"primary_metric", "primary_value", "primary_unit", "primary_state", "primary_lo", "primary_hi",
}

// AppendUnified appends u as one line to root/unified_results.jsonl and one
// row to root/unified_results.csv, writing the CSV header when the file is
// new. A CSV whose header differs from UnifiedColumns is left untouched and
// reported, so rows never land under the wrong columns.
func AppendUnified(root string, u Unified) error {
	line, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("encoding unified row %s: %w", u.RunID, err)
	}
	row, err := unifiedRow(u)
	if err != nil {
		return err
	}
	csvPath := filepath.Join(root, UnifiedCSV)
	if err := checkCSVHeader(csvPath); err != nil {
		return err
	}
	if err := AppendLines(filepath.Join(root, UnifiedJSONL), nil, append(line, '\n')); err != nil {
		return err
	}
	return appendCSV(csvPath, row)
}

func unifiedRow(u Unified) ([]string, error) {
	meta := u.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encoding metadata of %s: %w", u.RunID, err)
	}
	f := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	}
	return []string{
		u.Backend, u.Workload, u.RunID, strconv.FormatInt(u.Seed, 10),
		strconv.Itoa(u.Nodes), strconv.Itoa(u.Parallelism),
		f(u.Throughput), f(u.LatencyP50), f(u.LatencyP95), f(u.LatencyP99),
		f(u.SuccessRate), f(u.DurationSeconds), u.Timestamp, u.ConfigHash,
		u.BackendHash, string(m),
		u.PrimaryMetric, f(u.PrimaryValue), u.PrimaryUnit, u.PrimaryState, f(u.PrimaryLo), f(u.PrimaryHi),
	}, nil
}

// checkCSVHeader fails when path exists, is not empty and starts with
// another header (a symbolic link is refused by the append itself).
func checkCSVHeader(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("%s is a symbolic link: refusing to append through it; move it away", path)
	}
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	hdr, err := r.Read()
	if err == io.EOF {
		return nil
	}
	switch {
	case err == nil && strings.Join(hdr, ",") == strings.Join(UnifiedColumns, ","):
		return nil
	case err == nil && len(hdr) < len(UnifiedColumns) && strings.Join(hdr, ",") == strings.Join(UnifiedColumns[:len(hdr)], ","):
		return fmt.Errorf("%s was written by an older sagebench (without the primary_* columns); move it away to start a new one", path)
	}
	return fmt.Errorf("%s has an unexpected header; move it away to start a new one", path)
}

func appendCSV(path string, row []string) error {
	var hdr, buf bytes.Buffer
	for b, rec := range map[*bytes.Buffer][]string{&hdr: UnifiedColumns, &buf: row} {
		w := csv.NewWriter(b)
		w.Write(rec)
		w.Flush()
		if err := w.Error(); err != nil {
			return fmt.Errorf("encoding %s: %w", path, err)
		}
	}
	return AppendLines(path, hdr.Bytes(), buf.Bytes())
}
