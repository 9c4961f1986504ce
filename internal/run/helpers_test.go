package run

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/summary"
)

func itoa(n int) string { return strconv.Itoa(n) }

// summaryLoose is a validity rule that a loaded test machine always
// meets: these tests check records, not the machine's timing.
func summaryLoose() summary.Validity {
	return summary.Validity{MinDeliveredRatio: 0.01, MaxLagP99Ms: 60_000}
}

func readRequests(t *testing.T, dir string) []record.Request {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record.Request
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r record.Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("requests.jsonl line %d: %v", len(out)+1, err)
		}
		out = append(out, r)
	}
	return out
}
