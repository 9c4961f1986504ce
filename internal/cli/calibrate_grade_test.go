package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateServeAndGrade: `calibrate serve` writes its URL and a
// truth log; `calibrate grade` reads a real AIPerf export (the calibrate
// package's golden) and reproduces AIPerf's own TTFT median, and rejects
// bad input with exit 2, naming the field.
func TestCalibrateServeAndGrade(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	logPath, urlFile := filepath.Join(dir, "truth.jsonl"), filepath.Join(dir, "url")
	code := Main(context.Background(), []string{"calibrate", "serve", "--log", logPath, "--url-file", urlFile, "--for", "100ms"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "serving http://127.0.0.1:") {
		t.Fatalf("serve: exit %d, %q %q", code, out.String(), errOut.String())
	}
	if b, err := os.ReadFile(urlFile); err != nil || !strings.HasPrefix(string(b), "http://127.0.0.1:") {
		t.Fatalf("url file: %q %v", b, err)
	}
	golden := filepath.Join("..", "calibrate", "testdata", "aiperf")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"aiperf", []string{"--tool", "aiperf", "--truth", filepath.Join(golden, "truth.jsonl"), golden}, 0, "TTFT"},
		{"json", []string{"--tool", "aiperf", "--truth", filepath.Join(golden, "truth.jsonl"), "--format", "json", golden}, 0, `"reproduced": true`},
		{"unknown tool", []string{"--tool", "locust", "--truth", filepath.Join(golden, "truth.jsonl"), golden}, 2, "--tool"},
		{"no truth", []string{"--tool", "aiperf", golden}, 2, "--truth"},
		{"wrong tool for the export", []string{"--tool", "guidellm", "--truth", filepath.Join(golden, "truth.jsonl"), golden}, 2, "benchmarks.json"},
		{"non-loopback serve", nil, 2, "loopback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out.Reset()
			errOut.Reset()
			args := append([]string{"calibrate", "grade"}, tc.args...)
			if tc.args == nil {
				args = []string{"calibrate", "serve", "--log", logPath, "--addr", "0.0.0.0:0"}
			}
			code := Main(context.Background(), args, &out, &errOut)
			if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.want) {
				t.Errorf("exit %d, want %d with %q in:\n%s%s", code, tc.code, tc.want, out.String(), errOut.String())
			}
		})
	}
}
