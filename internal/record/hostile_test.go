package record

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRequestWriterLineAtomic: at any moment (a SIGKILL can come at any
// moment) the file ends between lines. Before, a 64 KiB bufio buffer
// flushed mid-line and left a cut line for up to a second.
func TestRequestWriterLineAtomic(t *testing.T) {
	p := filepath.Join(t.TempDir(), "requests.jsonl")
	w, err := CreateRequestWriter(p, 1<<40) // no tick: only size-triggered writes
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range 400 {
		if err := w.Write(Request{ID: fmt.Sprintf("r%d", i), Kind: "request", Error: strings.Repeat("e", 700+i)}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Fatalf("after %d writes the file ends mid-line (%d bytes)", i+1, len(b))
		}
	}
}

// shortFile accepts limit bytes, then fails like a full disk.
type shortFile struct {
	bytes.Buffer
	limit int
}

func (f *shortFile) Write(p []byte) (int, error) {
	room := f.limit - f.Len()
	if room >= len(p) {
		return f.Buffer.Write(p)
	}
	f.Buffer.Write(p[:max(room, 0)])
	return max(room, 0), syscall.ENOSPC
}

func (f *shortFile) Truncate(n int64) error { f.Buffer.Truncate(int(n)); return nil }
func (f *shortFile) Sync() error            { return nil }
func (f *shortFile) Close() error           { return nil }
func (f *shortFile) Name() string           { return "requests.jsonl" }

func TestRequestWriterShortWrite(t *testing.T) {
	f := &shortFile{limit: 150_000}
	w := newRequestWriter(f, 1<<40)
	var werr error
	for i := 0; werr == nil && i < 1000; i++ {
		werr = w.Write(Request{ID: fmt.Sprintf("r%d", i), Kind: "request", Error: strings.Repeat("x", 900)})
	}
	select {
	case <-w.Failed():
	default:
		t.Fatal("Failed not closed after a write error")
	}
	if !errors.Is(werr, syscall.ENOSPC) || !errors.Is(w.Err(), syscall.ENOSPC) || !strings.Contains(werr.Error(), "requests.jsonl") {
		t.Fatalf("Write error %v, Err %v: want ENOSPC naming the file", werr, w.Err())
	}
	if err := w.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Close = %v, want the sticky error", err)
	}
	checkWholeLines(t, f.Bytes())
}

func checkWholeLines(t *testing.T, b []byte) int {
	t.Helper()
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("file ends mid-line: ...%q", b[max(0, len(b)-40):])
	}
	n := 0
	if err := ReadRequests(bytes.NewReader(b), "requests.jsonl", func(int, Request) { n++ }); err != nil {
		t.Fatalf("reading back: %v", err)
	}
	return n
}

// smallDisk mounts a 200 KB tmpfs (root only, as the repro).
func smallDisk(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() != 0 || exec.Command("mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", dir).Run() != nil {
		t.Skip("needs root and mount to make a small disk")
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// TestRequestWriterFullDisk is the 200 KB tmpfs: the error shows
// at the latest at the next flush, through Failed, and the file holds
// only whole lines.
func TestRequestWriterFullDisk(t *testing.T) {
	dir := smallDisk(t)
	p := filepath.Join(dir, "requests.jsonl")
	w, err := CreateRequestWriter(p, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000 && w.Err() == nil; i++ {
		w.Write(Request{ID: fmt.Sprintf("r%d", i), Kind: "request", Error: strings.Repeat("x", 500)})
	}
	w.Flush()
	<-w.Failed()
	if err := w.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Close = %v, want ENOSPC", err)
	}
	b, _ := os.ReadFile(p)
	if n := checkWholeLines(t, b); n == 0 {
		t.Fatal("no whole line kept")
	}
}

// TestCheckWritable: the pre-check writes a realistic size, so a disk
// with room for an empty file but not for the records fails it.
func TestCheckWritable(t *testing.T) {
	dir := smallDisk(t)
	if err := CheckWritable(dir, 10<<10); err != nil {
		t.Fatalf("10 KiB on a 200 KB disk: %v", err)
	}
	if err := CheckWritable(dir, RecordBytes(1000)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("records of 1000 requests on a 200 KB disk: %v, want ENOSPC", err)
	}
	if des, _ := os.ReadDir(dir); len(des) != 0 {
		t.Fatalf("the check left %v behind", des)
	}
}

func TestRecordBytes(t *testing.T) {
	tests := []struct {
		n    int
		want int64
	}{{0, 1 << 20}, {1000, 1000<<10 + 1<<20}, {1 << 40, 64 << 20}, {-1, 64 << 20}}
	for _, tc := range tests {
		if got := RecordBytes(tc.n); got != tc.want {
			t.Errorf("RecordBytes(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestReadRequestsCutTail(t *testing.T) {
	good := `{"id":"a","kind":"request","e2e_ms":1}` + "\n"
	tests := []struct {
		name    string
		in      string
		read    int
		cutTail bool
	}{
		{"whole", good + good, 2, false},
		{"cut tail", good + good + `{"id":"c","ki`, 2, true},
		{"bad middle line is not a cut tail", good + "{oops\n" + good, 2, false},
		{"last line without newline but whole", good + strings.TrimSuffix(good, "\n"), 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := ReadRequests(strings.NewReader(tc.in), "requests.jsonl", func(int, Request) { n++ })
			if n != tc.read || errors.Is(err, ErrCutTail) != tc.cutTail {
				t.Fatalf("read %d (want %d), err %v (cut tail want %v)", n, tc.read, err, tc.cutTail)
			}
		})
	}
}

// TestHugeLine: a target that streams 2,000 choices per chunk made a
// 26.6 MB line our own reader refused. Bound keeps the line small, and a
// foreign huge line is skipped, not fatal to the rest of the file.
func TestHugeLine(t *testing.T) {
	tokens := make([]int64, 2_000_000)
	for i := range tokens {
		tokens[i] = int64(i) * 1000
	}
	var buf bytes.Buffer
	f := &shortFile{limit: 1 << 30}
	w := newRequestWriter(f, 1<<40)
	w.Write(Request{ID: "huge", Kind: "request", TokenNS: tokens, Error: strings.Repeat("é", 1<<20)})
	w.Close()
	var got Request
	if err := ReadRequests(bytes.NewReader(f.Bytes()), "r", func(_ int, r Request) { got = r }); err != nil {
		t.Fatalf("reading our own huge line: %v", err)
	}
	if len(got.TokenNS) != MaxTokenNS || got.TokenNSDropped != len(tokens)-MaxTokenNS || got.TokenNS[MaxTokenNS-1] != tokens[len(tokens)-1] {
		t.Fatalf("TokenNS %d kept, %d dropped", len(got.TokenNS), got.TokenNSDropped)
	}
	buf.WriteString(`{"id":"a","kind":"request"}` + "\n")
	buf.WriteString(`{"id":"big","error":"` + strings.Repeat("x", maxLine+10) + "\"}\n")
	buf.WriteString(`{"id":"b","kind":"request"}` + "\n")
	var ids []string
	err := ReadRequests(&buf, "r", func(_ int, r Request) { ids = append(ids, r.ID) })
	if !errors.Is(err, errLineTooLong) || len(ids) != 2 || ids[1] != "b" {
		t.Fatalf("ids %v, err %v: want a and b, and the long line reported", ids, err)
	}
}
