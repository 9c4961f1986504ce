package workload

import (
	"slices"
	"testing"
)

func TestOverridesUnused(t *testing.T) {
	rate, n := 3.0, 10
	cases := []struct {
		name  string
		o     Overrides
		names []string
		want  []string
	}{
		{"none set", Overrides{}, []string{"rate", "llm-ratio"}, nil},
		{"set and named", Overrides{Rate: &rate, TotalRequests: &n}, []string{"total-requests", "llm-ratio", "rate"}, []string{"total-requests", "rate"}},
		{"set, not named", Overrides{Rate: &rate}, []string{"llm-ratio"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.o.Unused(c.names...); !slices.Equal(got, c.want) {
				t.Errorf("Unused(%v) = %v, want %v", c.names, got, c.want)
			}
		})
	}
}
