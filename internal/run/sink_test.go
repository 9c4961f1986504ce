package run

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/summary"
)

// TestSinkKeepsEveryRecord: whatever was recorded before close is in both
// the summary and requests.jsonl (the sink polls its queue, so close must
// take the rest); a record after close is in neither.
func TestSinkKeepsEveryRecord(t *testing.T) {
	for _, n := range []int{0, 1, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "requests.jsonl")
			w, err := record.CreateRequestWriter(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			col := summary.NewCollector()
			s := newSink(col, w, nil)
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := g; i < n; i += 4 {
						s.Record(record.Request{ID: fmt.Sprint(i), Seq: i, Kind: "request", Type: "embedding", OK: true, E2EMs: 1})
					}
				})
			}
			wg.Wait()
			if err := s.close(); err != nil {
				t.Fatal(err)
			}
			s.Record(record.Request{ID: "late", Kind: "request", Type: "embedding"})
			if got := col.Live().Done; got != n {
				t.Errorf("summary has %d requests, want %d", got, n)
			}
			if got := countLines(t, path); got != n {
				t.Errorf("requests.jsonl has %d lines, want %d", got, n)
			}
		})
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		n++
	}
	return n
}
