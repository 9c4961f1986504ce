package protocol_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
)

func TestDeadlineValue(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bound time.Duration
		want  string
	}{
		{"none", 0, ""},
		{"negative", -time.Second, ""},
		{"sub-millisecond rounds up, never 0", 300 * time.Microsecond, "1"},
		{"fraction rounds up", 1500 * time.Microsecond, "2"},
		{"whole", 250 * time.Millisecond, "250"},
		{"limit", protocol.MaxDeadline, "86400000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := protocol.DeadlineValue(tc.bound); got != tc.want {
				t.Errorf("DeadlineValue(%v) = %q, want %q", tc.bound, got, tc.want)
			}
			h := http.Header{}
			protocol.SetDeadline(h, tc.bound)
			if got := h.Get(protocol.HeaderDeadline); got != tc.want {
				t.Errorf("SetDeadline header = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNamesAreDistinct(t *testing.T) {
	for name, list := range map[string][]string{"priorities": protocol.Priorities(), "policies": protocol.Policies()} {
		seen := map[string]bool{}
		for _, n := range list {
			if n == "" || seen[n] {
				t.Errorf("%s: %q empty or repeated in %v", name, n, list)
			}
			seen[n] = true
		}
	}
}
