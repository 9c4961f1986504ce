package summary

import (
	"testing"

	"github.com/sagebench/sagebench/internal/record"
)

// TestDistLazy: a dist makes its histogram with its first value; until
// then it reports nothing, merges as empty, and a merge into it of one
// with values gives those values.
func TestDistLazy(t *testing.T) {
	empty := newDist()
	if empty.h != nil || empty.count() != 0 || empty.latency() != (record.Latency{}) || empty.quantile(99) != 0 {
		t.Fatalf("an unused dist: h %v, count %d, latency %+v", empty.h, empty.count(), empty.latency())
	}
	d := newDist()
	d.merge(empty)
	if d.h != nil {
		t.Error("merging an empty dist made a histogram")
	}
	full := newDist()
	full.add(2.5)
	full.add(7)
	d.merge(full)
	if got := d.latency(); got.Count != 2 || got.Max != 7 || !near(got.P50, 2.5, 0.001) {
		t.Errorf("after merging two values: %+v", got)
	}
}
