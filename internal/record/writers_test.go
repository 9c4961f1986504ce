package record

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/perf/benchfmt"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.json")
	for _, content := range []string{"first", "second, longer content"} {
		if err := WriteFileAtomic(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		if string(got) != content {
			t.Fatalf("got %q, want %q", got, content)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x.json"), []byte("x")); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func TestRequestWriterConcurrent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "requests.jsonl")
	w, err := CreateRequestWriter(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				w.Write(Request{ID: fmt.Sprintf("%d-%d", g, i), Kind: "request", TokenNS: []int64{1, 2, 3}})
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	f, _ := os.Open(p)
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %d: %v", len(seen)+1, err)
		}
		seen[r.ID] = true
	}
	if len(seen) != writers*each || w.Count() != writers*each {
		t.Errorf("%d distinct lines, Count %d, want %d", len(seen), w.Count(), writers*each)
	}
}

func TestAppendUnifiedHeaderOnce(t *testing.T) {
	root := t.TempDir()
	for i := range 3 {
		u := Unified{Backend: "sage", Workload: "Q2", RunID: fmt.Sprintf("q2-sage-%d-0000000%d", i, i), Seed: 42 + int64(i),
			Nodes: 1, Parallelism: 2, Throughput: F(10.5), Metadata: map[string]any{"note": "a,b \"quoted\"\nline"}}
		if err := AppendUnified(root, u); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := os.Open(filepath.Join(root, UnifiedCSV))
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || strings.Join(rows[0], ",") != strings.Join(UnifiedColumns, ",") {
		t.Fatalf("rows %d, header %v", len(rows), rows[0])
	}
	var meta map[string]any
	mi := slices.Index(UnifiedColumns, "metadata")
	if err := json.Unmarshal([]byte(rows[3][mi]), &meta); err != nil || meta["note"] != "a,b \"quoted\"\nline" {
		t.Errorf("metadata column %q: %v", rows[3][mi], err)
	}
	data, _ := os.ReadFile(filepath.Join(root, UnifiedJSONL))
	if n := bytes.Count(data, []byte("\n")); n != 3 {
		t.Errorf("%d jsonl lines, want 3", n)
	}
}

func TestAppendUnifiedRefusesForeignHeader(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, UnifiedCSV), []byte("a,b,c\n1,2,3\n"), 0o644)
	err := AppendUnified(root, Unified{RunID: "x"})
	if err == nil || !strings.Contains(err.Error(), "unexpected header") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, UnifiedJSONL)); err == nil {
		t.Error("jsonl was appended although the csv was refused")
	}
}

func TestWriteBenchParsesWithBenchfmt(t *testing.T) {
	var buf bytes.Buffer
	lines := []BenchLine{
		{Name: "Q2ControlMix/backend=sage/policy=fifo/type=llm", N: 70, Values: []BenchValue{
			{2.1e8, "ns/op"}, {210, "p50-ms"}, {230, "p99-ms"}, {13.6, "req/s"}, {1, "slo-attainment"}}},
		{Name: "Q2ControlMix/backend=sage/policy=fifo/type=has space", N: 0, Values: []BenchValue{{1, "ns/op"}, {0, "p50-ms"}}},
	}
	hdr := BenchHeader{GOOS: "linux", GOARCH: "amd64", Pkg: "example", CPU: "Some  CPU @ 2GHz"}
	if err := WriteBench(&buf, hdr, lines); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(&buf, "bench.txt")
	var names []string
	for r.Scan() {
		switch res := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("syntax error: %v", res)
		case *benchfmt.Result:
			names = append(names, string(res.Name))
			if res.GetConfig("cpu") != "Some CPU @ 2GHz" {
				t.Errorf("cpu config = %q", res.GetConfig("cpu"))
			}
		}
	}
	if len(names) != 2 || names[1] != "Q2ControlMix/backend=sage/policy=fifo/type=has_space" {
		t.Errorf("names %v", names)
	}
}

func TestCPUModelAndMemory(t *testing.T) {
	cases := []struct {
		name, cpuinfo, want string
	}{
		{"x86", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n", "Intel(R) Xeon(R) CPU @ 2.20GHz"},
		{"arm", "processor\t: 0\nBogoMIPS\t: 50.00\n\nHardware\t: BCM2835\nModel\t: Raspberry Pi 4\n", "BCM2835"},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := cpuModel(strings.NewReader(c.cpuinfo)); got != c.want {
				t.Errorf("cpuModel = %q, want %q", got, c.want)
			}
		})
	}
	if got := memTotalMiB(strings.NewReader("MemTotal:       16384000 kB\nMemFree: 1 kB\n")); got != 16000 {
		t.Errorf("memTotalMiB = %d", got)
	}
	env := CollectEnvironment()
	if env.GoVersion == "" || env.Cores < 1 || env.OS == "" {
		t.Errorf("environment %+v", env)
	}
}

// TestRequestWriterWriteAfterClose: a request handed over after Close (a
// hit that outlived the drain) is refused with an error, not buffered in
// a writer that will never flush, and Count stays the lines in the file.
func TestRequestWriterWriteAfterClose(t *testing.T) {
	p := filepath.Join(t.TempDir(), "requests.jsonl")
	w, err := CreateRequestWriter(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Request{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Request{ID: "late"}); err == nil {
		t.Error("Write after Close returned nil")
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	b, _ := os.ReadFile(p)
	if n := bytes.Count(b, []byte("\n")); n != 1 || w.Count() != 1 {
		t.Errorf("%d lines in the file, Count %d; want 1 and 1", n, w.Count())
	}
}
