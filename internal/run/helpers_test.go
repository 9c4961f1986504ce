package run

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

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

func workloadOverrides() workload.Overrides { return workload.Overrides{} }
