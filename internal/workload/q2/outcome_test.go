package q2

import (
	"reflect"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/reqset"
)

// TestSplitByPhase: the groups are those of a plain grouping, in order,
// whether a phase's records are contiguous (shared with rs) or not
// (copied), and appending to a group never overwrites rs.
func TestSplitByPhase(t *testing.T) {
	tests := []struct {
		name   string
		phases string // phase of each record, in order
	}{
		{"one phase", "aaaa"},
		{"sequential", "aabbbc"},
		{"interleaved", "abab"},
		{"mixed", "aabbab"},
		{"none", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rs []record.Request
			want := map[string][]record.Request{}
			for i, p := range tc.phases {
				r := record.Request{Seq: i, Phase: string(p)}
				rs = append(rs, r)
				want[r.Phase] = append(want[r.Phase], r)
			}
			before := append([]record.Request(nil), rs...)
			got := splitByPhase(rs)
			if len(got) != len(want) {
				t.Fatalf("%d groups, want %d", len(got), len(want))
			}
			for p, g := range got {
				if !reflect.DeepEqual(g, want[p]) {
					t.Errorf("phase %s: %v, want %v", p, g, want[p])
				}
				_ = append(g, record.Request{Seq: -1, Phase: "x"})
			}
			if !reflect.DeepEqual(rs, before) {
				t.Errorf("rs changed: %v", rs)
			}
		})
	}
}

// TestWhere: where keeps what reqset.Where keeps.
func TestWhere(t *testing.T) {
	rs := []record.Request{{Type: "embedding"}, {Type: "llm"}, {Type: "embedding"}}
	for _, typ := range []string{"embedding", "llm", "retrieve"} {
		if got, want := where(rs, reqset.IsType(typ)), reqset.Where(rs, reqset.IsType(typ)); len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("%s: %v, want %v", typ, got, want)
		}
	}
	all := rs[:1]
	if got := where(all, reqset.IsType("embedding")); &got[0] != &all[0] {
		t.Error("every record kept: where copied them")
	}
}
