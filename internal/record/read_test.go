package record

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeRun(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{"valid", `{"run_id":"q2-sage-0-0a1b2c3d","workload":"Q2","valid":true,"complete":true,"summary":{"e2e":{"p99_ms":12.5}}}`, ""},
		{"truncated", `{"run_id":"q2-sage-0-0a1b2c3d","workload":"Q2","val`, "decoding run.json"},
		{"trailing", `{"run_id":"a","workload":"Q2"} {}`, "trailing data"},
		{"a stray bracket", `{"run_id":"a","workload":"Q2"}]`, "trailing data"},
		{"no run id", `{"workload":"Q2"}`, "run_id is empty"},
		{"no workload", `{"run_id":"a"}`, "workload is empty"},
		{"empty", ``, "decoding run.json"},
		{"wrong type", `{"run_id":"a","workload":"Q2","seed":"x"}`, "decoding run.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeRun([]byte(tc.in))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("DecodeRun: %v", err)
				}
				if r.Summary.E2E.P99 != 12.5 || !r.Valid || !r.Complete {
					t.Fatalf("decoded %+v", r)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestReadRunFileNamesPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, []byte(`{"run_id":`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadRun(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want the path in it", err)
	}
	if _, err := ReadRun(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: err = %v", err)
	}
}

func TestReadRunBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := ReadRun("/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("ReadRun(/dev/zero) = %v, want a size error", err)
	}
}

func TestReadRequestsReportsBadLines(t *testing.T) {
	in := strings.Join([]string{
		`{"id":"r1","kind":"request","e2e_ms":10,"ok":true}`,
		``,
		`not json`,
		`{"id":"r2","kind":"request","e2e_ms":-1}`,
		`{"kind":"request","e2e_ms":3}`,
		`{"id":"r3","kind":"request","e2e_ms":30,"ok":true}`,
		`{"id":"r4","kind":"req`,
	}, "\n")
	var ids []string
	var lines []int
	err := ReadRequests(strings.NewReader(in), "requests.jsonl", func(line int, r Request) {
		ids = append(ids, r.ID)
		lines = append(lines, line)
	})
	if strings.Join(ids, ",") != "r1,r3" || lines[1] != 6 {
		t.Fatalf("read ids %v at lines %v", ids, lines)
	}
	var le *LineError
	if !errors.As(err, &le) || le.Line != 3 || le.File != "requests.jsonl" {
		t.Fatalf("first error = %v", err)
	}
	for _, want := range []string{"requests.jsonl:3:", "requests.jsonl:4: request r2: negative latency", "requests.jsonl:5: request without id", "requests.jsonl:7:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestReadRequestsCapsErrorsButCountsThem(t *testing.T) {
	in := strings.Repeat("garbage\n", maxLineErrors+5)
	err := ReadRequests(strings.NewReader(in), "f", func(int, Request) { t.Fatal("no request expected") })
	if err == nil || !strings.Contains(err.Error(), "5 more unreadable lines") {
		t.Fatalf("err = %v", err)
	}
}

func TestReadUnified(t *testing.T) {
	in := `{"backend":"sage","workload":"Q1","run_id":"a","throughput":12.5,"latency_p99":40}
{"backend":"sage","workload":"Q1"}
`
	var got []Unified
	err := ReadUnified(strings.NewReader(in), "unified_results.jsonl", func(_ int, u Unified) { got = append(got, u) })
	if len(got) != 1 || *got[0].Throughput != 12.5 || *got[0].LatencyP99 != 40 || got[0].LatencyP50 != nil {
		t.Fatalf("rows = %+v", got)
	}
	if err == nil || !strings.Contains(err.Error(), "unified_results.jsonl:2: unified row: run_id is empty") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzDecodeRun(f *testing.F) {
	f.Add([]byte(`{"run_id":"a","workload":"Q1","valid":true}`))
	f.Add([]byte(`{"run_id":"a","workload":"Q1","summary":{"groups":[{"labels":{"a":"b"}}]}}`))
	f.Add([]byte("\x00\xff{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRun(b)
		if err == nil && (r.RunID == "" || r.Workload == "") {
			t.Fatalf("accepted a run without id or workload: %q", b)
		}
	})
}

func FuzzReadRequests(f *testing.F) {
	f.Add([]byte(`{"id":"r1","e2e_ms":1}` + "\n" + `{"id":"r2","e2e_ms":2`))
	f.Add([]byte("\xff\xfe\n\n{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		err := ReadRequests(strings.NewReader(string(b)), "f", func(_ int, r Request) {
			n++
			if r.ID == "" || r.E2EMs < 0 {
				t.Fatalf("accepted bad request %+v", r)
			}
		})
		_ = err
	})
}

// TestReadRequestsFileRegularOnly: a requests.jsonl that is a link to a
// device with no end is refused at once, not read forever.
func TestReadRequestsFileRegularOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	if err := os.Symlink("/dev/zero", path); err != nil {
		t.Skip(err)
	}
	if err := ReadRequestsFile(path, func(int, Request) {}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("ReadRequestsFile of /dev/zero: %v", err)
	}
}
