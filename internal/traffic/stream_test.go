package traffic_test

import (
	"strings"
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

func TestPool(t *testing.T) {
	p := traffic.Pool{LLMEngines: 2, LLMSlots: 3, Profile: "llama3.1-8b-h100"}
	y := string(p.YAML("fifo"))
	for _, want := range []string{"policy: fifo", "{id: llm-0, kind: llm, profile: llama3.1-8b-h100, slots: 3}", "{id: llm-1,", "id: embed-0"} {
		if !strings.Contains(y, want) {
			t.Errorf("YAML lacks %q:\n%s", want, y)
		}
	}
	if err := p.Validate("qx.stack"); err != nil {
		t.Error(err)
	}
	p.LLMSlots = 0
	if err := p.Validate("qx.stack"); err == nil || !strings.Contains(err.Error(), "qx.stack") {
		t.Errorf("zero slots: %v", err)
	}
}
