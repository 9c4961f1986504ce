package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// AppendLines appends data (whole lines, ending in '\n') to path as one
// unit, preceded by header when the file is empty (or new): the file is opened without following a symbolic link (a link,
// FIFO or device at path is refused, never written through), locked
// against other sagebench appenders, cut back to its last whole line if
// an earlier writer died mid-row (so the new rows never glue onto a cut
// one), written with one write, cut back to where it was when the write
// fails or is short (a full disk), and fsynced. A reader therefore only
// ever sees whole lines.
func AppendLines(path string, header, data []byte) error {
	if err := checkRegular(path); err != nil {
		return err
	}
	// O_NOFOLLOW and O_NONBLOCK hold if path was swapped since: a link
	// fails with ELOOP, a FIFO without a reader does not block the run.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("%s is a symbolic link: refusing to append through it; move it away", path)
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", path, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%v): refusing to append to it; move it away", path, st.Mode().Type())
	}
	size, err := wholeLines(path, st.Size())
	if err != nil {
		return err
	}
	if size < st.Size() {
		if err := f.Truncate(size); err != nil {
			return fmt.Errorf("cutting the partial last row of %s: %w", path, err)
		}
	}
	if size == 0 && len(header) > 0 {
		data = append(append([]byte(nil), header...), data...)
	}
	n, err := f.Write(data)
	if err == nil && n < len(data) {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		if terr := f.Truncate(size); terr != nil {
			return fmt.Errorf("appending to %s: %w (and cutting it back to its last whole line: %v)", path, err, terr)
		}
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	return nil
}

// checkRegular refuses a path that exists and is not a regular file
// (a symbolic link, a FIFO, a device, a directory).
func checkRegular(path string) error {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("opening %s: %w", path, err)
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: refusing to append through it; move it away", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%v): refusing to append to it; move it away", path, st.Mode().Type())
	}
	return nil
}

// wholeLines returns the length of path's content up to its last
// newline (size when it ends in one or is empty).
func wholeLines(path string, size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("reading %s: %w", path, err)
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}
