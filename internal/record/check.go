package record

import (
	"fmt"
	"os"
)

// EstimatedLineBytes is a generous size of one requests.jsonl line (an
// ordinary streamed request takes 300–600 bytes).
const EstimatedLineBytes = 1 << 10

// RecordBytes is the space CheckWritable should prove for a run of n
// requests: their lines plus 1 MiB for run.json and the summaries,
// capped at 64 MiB (the check writes that much).
func RecordBytes(n int) int64 {
	const slack, most = 1 << 20, 64 << 20
	if n < 0 || n > (most-slack)/EstimatedLineBytes {
		return most
	}
	return int64(n)*EstimatedLineBytes + slack
}

// CheckWritable proves that dir takes size more bytes before any traffic:
// it writes size bytes to a temporary file there, fsyncs it and removes
// it. Creating an empty file is not enough: a full disk still allows that.
func CheckWritable(dir string, size int64) error {
	f, err := os.CreateTemp(dir, ".sagebench-write-check-*")
	if err != nil {
		return fmt.Errorf("output dir %s is not writable: %w", dir, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for left := size; left > 0; left -= int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
			return fmt.Errorf("output dir %s cannot take the run's records (%d bytes): %w", dir, size, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("output dir %s cannot take the run's records (%d bytes): %w", dir, size, err)
	}
	return nil
}
