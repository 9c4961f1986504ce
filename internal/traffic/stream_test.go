package traffic_test

import (
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/traffic"
)

func TestMerge(t *testing.T) {
	ms := time.Millisecond
	a := traffic.Stream{Schedule: load.Schedule{Offsets: []time.Duration{0, 20 * ms}, Length: 30 * ms},
		Items: []traffic.Item{{Tenant: "a"}, {Tenant: "a"}}}
	b := traffic.Stream{Schedule: load.Schedule{Offsets: []time.Duration{0, 5 * ms}}, At: 10 * ms,
		Items: []traffic.Item{{Tenant: "b"}, {Tenant: "b"}}}
	s, items := traffic.Merge(a, b)
	want := []time.Duration{0, 10 * ms, 15 * ms, 20 * ms}
	tenants := "abba"
	for i := range want {
		if s.Offsets[i] != want[i] || items[i].Tenant != tenants[i:i+1] {
			t.Errorf("arrival %d: %v %q, want %v %q", i, s.Offsets[i], items[i].Tenant, want[i], tenants[i:i+1])
		}
	}
	if s.Span() != 30*ms {
		t.Errorf("span %v, want 30ms (the longer stream)", s.Span())
	}
}
