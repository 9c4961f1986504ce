package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// quickFrom names a results root of real quick runs to refresh the
// fixtures under testdata/quick from (see testdata/quick/README.md):
//
//	go test ./internal/report -run TestRefreshQuickFixtures -quick-from /tmp/r
var quickFrom = flag.String("quick-from", "", "refresh testdata/quick from the run directories under this results root")

// quickDir is where the fixtures of real quick runs live: one run of
// each Q under q1 … q8, and three repetitions of Q2 under compare.
var quickDir = filepath.Join("testdata", "quick")

// quickRuns lists the fixture run directories of set ("q1" … "q8",
// "compare").
func quickRuns(t testing.TB, set string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(quickDir, set, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixture runs under %s (see testdata/quick/README.md)", filepath.Join(quickDir, set))
	}
	sort.Strings(dirs)
	return dirs
}

// TestRefreshQuickFixtures copies the runs under -quick-from into
// testdata/quick, trimmed: token timestamps cut to the first 8 and the
// last of each request (token_ns_dropped says so), the request fields
// the report does not read left out, metrics.jsonl cut to the series the
// report draws.
func TestRefreshQuickFixtures(t *testing.T) {
	if *quickFrom == "" {
		t.Skip("refresh with -quick-from RESULTS_ROOT")
	}
	for _, set := range []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "compare"} {
		src, _ := filepath.Glob(filepath.Join(*quickFrom, set, "*", "run.json"))
		if len(src) == 0 {
			continue
		}
		os.RemoveAll(filepath.Join(quickDir, set))
		for _, rj := range src {
			from := filepath.Dir(rj)
			to := filepath.Join(quickDir, set, filepath.Base(from))
			if err := os.MkdirAll(to, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"run.json", "events.jsonl", "windows.jsonl"} {
				copyFile(t, filepath.Join(from, name), filepath.Join(to, name), nil)
			}
			copyFile(t, filepath.Join(from, "requests.jsonl"), filepath.Join(to, "requests.jsonl"), everyKth(filepath.Join(from, "requests.jsonl"), trimRequest))
			copyFile(t, filepath.Join(from, "metrics.jsonl"), filepath.Join(to, "metrics.jsonl"), trimSeries)
		}
	}
}

// maxFixtureRequests bounds the request lines kept per fixture run.
const maxFixtureRequests = 320

// everyKth keeps every k-th line of path (k so that at most
// maxFixtureRequests remain), edited; nil for the others.
func everyKth(path string, edit func([]byte) []byte) func([]byte) []byte {
	b, _ := os.ReadFile(path)
	k := bytes.Count(b, []byte("\n"))/maxFixtureRequests + 1
	n := 0
	return func(line []byte) []byte {
		n++
		if (n-1)%k != 0 {
			return nil
		}
		return edit(line)
	}
}

func copyFile(t *testing.T, from, to string, edit func(line []byte) []byte) {
	t.Helper()
	f, err := os.Open(from)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if edit == nil {
		b, _ := io.ReadAll(f)
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if b := edit(sc.Bytes()); b != nil {
			out.Write(b)
			out.WriteByte('\n')
		}
	}
	if err := os.WriteFile(to, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// trimRequest keeps a request's first 8 token timestamps and its last,
// and leaves out the fields the report does not read.
func trimRequest(line []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	for _, k := range []string{"model", "server_ttft_ms", "server_e2e_ms", "first_answer_token_ns", "ttfat_ms", "first_byte_ns",
		"prompt_tokens", "completion_tokens", "queue_ms", "engine", "tpot_ms", "sent_ns", "service_ms"} {
		delete(m, k)
	}
	var tokens []int64
	if json.Unmarshal(m["token_ns"], &tokens) != nil || len(tokens) <= 9 {
		b, _ := json.Marshal(m)
		return b
	}
	var dropped int
	json.Unmarshal(m["token_ns_dropped"], &dropped)
	keep := append(tokens[:8:8], tokens[len(tokens)-1])
	m["token_ns"], _ = json.Marshal(keep)
	m["token_ns_dropped"], _ = json.Marshal(dropped + len(tokens) - 9)
	b, _ := json.Marshal(m)
	return b
}

// trimSeries keeps the series the report prefers to draw.
func trimSeries(line []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	var vals map[string]float64
	if json.Unmarshal(m["values"], &vals) != nil {
		return line
	}
	for k := range vals {
		keep := false
		for _, p := range []string{"queue", "running", "kv", "waiting", "inflight"} {
			keep = keep || strings.Contains(strings.ToLower(k), p)
		}
		if !keep {
			delete(vals, k)
		}
	}
	m["values"], _ = json.Marshal(vals)
	b, _ := json.Marshal(m)
	return b
}
