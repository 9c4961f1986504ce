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

func TestQueueWaitRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want time.Duration
		ok   bool
	}{
		{"zero", "0", 0, true},
		{"micros", "1500", 1500 * time.Microsecond, true},
		{"absent", "", 0, false},
		{"negative", "-1", 0, false},
		{"not a number", "1.5ms", 0, false},
		{"beyond a day", "86400000001", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := protocol.ParseQueueWait(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ParseQueueWait(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
			if ok && protocol.QueueWaitValue(got) != tc.in {
				t.Errorf("QueueWaitValue(%v) = %q, want %q", got, protocol.QueueWaitValue(got), tc.in)
			}
		})
	}
}
