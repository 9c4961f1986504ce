package run

import (
	"path/filepath"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/workload"
)

func readRequests(t *testing.T, dir string) []record.Request {
	t.Helper()
	var out []record.Request
	if err := record.ReadRequestsFile(filepath.Join(dir, "requests.jsonl"), func(_ int, r record.Request) { out = append(out, r) }); err != nil {
		t.Fatal(err)
	}
	return out
}

func workloadOverrides() workload.Overrides { return workload.Overrides{} }
