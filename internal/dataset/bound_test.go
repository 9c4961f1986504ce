package dataset

import (
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/tokenizer"
)

// hugeValue is head, then fill repeated to size bytes, then tail, made
// as it is read: a 1 GiB file without a GiB of disk or memory.
type hugeValue struct {
	head, tail string
	fill       byte
	size, read int64
}

func (h *hugeValue) Read(p []byte) (int, error) {
	head, body := int64(len(h.head)), int64(len(h.head))+h.size
	end := body + int64(len(h.tail))
	n := 0
	for n < len(p) && h.read < end {
		switch pos := h.read; {
		case pos < head:
			k := copy(p[n:], h.head[pos:])
			n, h.read = n+k, h.read+int64(k)
		case pos < body:
			k := int(min(int64(len(p)-n), body-pos))
			for i := range k {
				p[n+i] = h.fill
			}
			n, h.read = n+k, h.read+int64(k)
		default:
			k := copy(p[n:], h.tail[pos-body:])
			n, h.read = n+k, h.read+int64(k)
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// TestOneHugeValueRefused (issue 41, hole 3): a 1 GiB value — a
// ShareGPT line, a prompt, a trace line, a CSV field — is refused after
// reading a few MB at most, as an *Error naming the file, the line the
// value starts on and the bound. Before, a 1 GiB ShareGPT line died out
// of memory after 11 s and 3.2 GB.
func TestOneHugeValueRefused(t *testing.T) {
	const gib = 1 << 30
	tok := tokenizer.Default()
	tests := []struct {
		name, format string
		in           *hugeValue
		line         int
	}{
		{"sharegpt", ShareGPT, &hugeValue{head: "[\n{\"conversations\":[{\"from\":\"human\",\"value\":\"hi\"}]},\n{\"conversations\":[{\"from\":\"human\",\"value\":\"", fill: 'a', size: gib, tail: "\"}]}]\n"}, 3},
		{"prompts", Prompts, &hugeValue{head: "{\"prompt\":\"hi\"}\n{\"prompt\":\"", fill: 'a', size: gib, tail: "\"}\n"}, 2},
		{"mooncake", Mooncake, &hugeValue{head: "{\"timestamp\":1,\"input_length\":5,\"output_length\":1}\n{\"timestamp\":2,\"input_length\":5,\"output_length\":1,\"hash_ids\":[", fill: '1', size: gib, tail: "]}\n"}, 2},
		{"azure quoted field", Azure, &hugeValue{head: "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,5,1\n\"", fill: '\n', size: gib, tail: "\",5,1\n"}, 3},
		{"burstgpt line", BurstGPT, &hugeValue{head: "Timestamp,Request tokens,Response tokens\n1,5,1\n2,5,", fill: '7', size: gib, tail: "\n"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var err error
			if tt.format == ShareGPT || tt.format == Prompts {
				_, err = ParsePrompts(tt.in, "big.file", tt.format, tok)
			} else {
				_, err = ParseTrace(tt.in, "big.file", tt.format)
			}
			runtime.ReadMemStats(&after)
			var de *Error
			if !errors.As(err, &de) || de.File != "big.file" || de.Line != tt.line || !strings.Contains(err.Error(), "4194304 bytes") {
				t.Fatalf("err %v, want an *Error naming big.file, line %d and the bound", err, tt.line)
			}
			if tt.in.read > 16<<20 {
				t.Errorf("read %d MB of the 1 GiB value before refusing it, want at most a few", tt.in.read>>20)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 100<<20 {
				t.Errorf("allocated %d MB, want well under 100", alloc>>20)
			}
		})
	}
}

// TestFIFORefused: a FIFO given as a dataset, a trace or a tokenizer is
// refused at once instead of blocking the command until a writer comes.
func TestFIFORefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo.json")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan [3]error, 1)
	go func() {
		_, e1 := ReadPrompts(p, ShareGPT, tokenizer.Default())
		_, e2 := ReadTrace(p, Mooncake)
		_, e3 := tokenizer.Load(p)
		done <- [3]error{e1, e2, e3}
	}()
	select {
	case errs := <-done:
		for i, err := range errs {
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("reader %d: %v, want the FIFO refused", i, err)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a reader blocked on the FIFO")
	}
}

// TestShareGPTEndsOrFails: a ShareGPT array cut short, or followed by
// more blank space than one value may hold, is an error, not the
// conversations before it taken silently.
func TestShareGPTEndsOrFails(t *testing.T) {
	tok := tokenizer.Default()
	head := "[\n{\"conversations\":[{\"from\":\"human\",\"value\":\"hi\"}]}"
	for _, tc := range []struct {
		name string
		in   io.Reader
		want string
	}{
		{"cut short", strings.NewReader(head), "the array does not end"},
		{"a GiB of blank space", &hugeValue{head: head, fill: ' ', size: 1 << 30, tail: "]"}, "4194304 bytes"},
	} {
		if _, err := ParsePrompts(tc.in, "s.json", ShareGPT, tok); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	if cs, err := ParsePrompts(strings.NewReader(head+"\n]\n"), "s.json", ShareGPT, tok); err != nil || len(cs) != 1 {
		t.Errorf("a whole file: %v, %d conversations", err, len(cs))
	}
}

// TestHashIDsBounded: Mooncake lines each within the bound cannot hold
// more than MaxHashIDs hash ids together (here a bound of 1,000).
func TestHashIDsBounded(t *testing.T) {
	line := "{\"timestamp\": 1, \"input_length\": 5, \"output_length\": 1, \"hash_ids\": [" + strings.TrimSuffix(strings.Repeat("1,", 300), ",") + "]}\n"
	_, err := parseMooncake(strings.NewReader(strings.Repeat(line, 5)), "m.jsonl", 1000)
	var de *Error
	if !errors.As(err, &de) || de.Line != 4 || de.Field != "hash_ids" || !strings.Contains(err.Error(), "more than 1000 hash ids") {
		t.Errorf("err %v, want an *Error at line 4, field hash_ids", err)
	}
	if es, err := parseMooncake(strings.NewReader(strings.Repeat(line, 3)), "m.jsonl", 1000); err != nil || len(es) != 3 {
		t.Errorf("900 hash ids: %v", err)
	}
}
