package traffic

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
)

func TestCanonicalNames(t *testing.T) {
	for key, name := range map[string]string{keyTenant: protocol.HeaderTenant, keyPriority: protocol.HeaderPriority,
		keyType: protocol.HeaderType, keyDeadline: protocol.HeaderDeadline} {
		if c := http.CanonicalHeaderKey(name); c != key {
			t.Errorf("%s: canonical form %q, the constant says %q", name, c, key)
		}
	}
}

// TestProtocolHeader: the same header as built with Header.Set and
// protocol.SetDeadline.
func TestProtocolHeader(t *testing.T) {
	tests := []struct {
		name     string
		it       Item
		deadline time.Duration
	}{
		{"with deadline", Item{Type: "llm", Tenant: "t1", Priority: "critical"}, 1500 * time.Millisecond},
		{"no deadline", Item{Type: "embedding", Tenant: "default", Priority: "normal"}, 0},
		{"empty values", Item{}, time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := http.Header{}
			want.Set(protocol.HeaderTenant, tc.it.Tenant)
			want.Set(protocol.HeaderPriority, tc.it.Priority)
			want.Set(protocol.HeaderType, tc.it.Type)
			protocol.SetDeadline(want, tc.deadline)
			if got := protocolHeader(tc.it, tc.deadline); !reflect.DeepEqual(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	for _, seq := range []int{0, 7, 42, 99999, 100000, 1234567, -3} {
		for _, phase := range []string{"fifo", "", "edf.r2"} {
			if got, want := RequestID(phase, seq), fmt.Sprintf("%s-%05d", phase, seq); got != want {
				t.Errorf("RequestID(%q, %d) = %q, want %q", phase, seq, got, want)
			}
		}
	}
}

// TestWordsUnchanged pins Words' output (a request's text is part of the
// workload: the same seed must send the same words) and its cost.
func TestWordsUnchanged(t *testing.T) {
	tests := []struct {
		seed uint64
		n    int
		want string
	}{
		{0, 4, "from batch priority engine"},
		{42, 1, "token"},
		{7, 12, "policy and priority in priority deadline router fair benchmark system be objective"},
	}
	for _, tc := range tests {
		if got := Words(tc.seed, tc.n); got != tc.want {
			t.Errorf("Words(%d, %d) = %q, want %q", tc.seed, tc.n, got, tc.want)
		}
	}
	if a := testing.AllocsPerRun(100, func() { Words(1, 4) }); a > 2 {
		t.Errorf("Words allocates %v times, want 2 (the source, the text)", a)
	}
}
