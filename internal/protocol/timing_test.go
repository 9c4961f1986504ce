package protocol_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sagebench/sagebench/internal/protocol"
)

func TestServerTimingRoundTrip(t *testing.T) {
	in := protocol.ServerTiming{Queue: 12 * time.Microsecond, FirstToken: 61 * time.Millisecond, End: 2 * time.Second}
	out, ok := protocol.ParseServerTiming(in.String())
	if !ok || out != in {
		t.Errorf("ParseServerTiming(%q) = %+v, %v; want %+v", in.String(), out, ok, in)
	}
}

func TestParseServerTimingRefusesHostileValues(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"empty", "", false},
		{"unknown key skipped", "queue_us=1;gpu=7;e2e_us=9", true},
		{"negative", "ttft_us=-5", false},
		{"beyond a day", "e2e_us=86400000001", false},
		{"not a number", "ttft_us=fast", false},
		{"no value", "ttft_us", false},
		{"too long", "queue_us=1;" + strings.Repeat("x=1;", 100), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := protocol.ParseServerTiming(tc.in); ok != tc.ok {
				t.Errorf("ParseServerTiming(%q) ok = %v, want %v", tc.in, ok, tc.ok)
			}
		})
	}
}

func FuzzParseServerTiming(f *testing.F) {
	for _, s := range []string{"queue_us=1;ttft_us=2;e2e_us=3", "", ";;", "e2e_us=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, ok := protocol.ParseServerTiming(s)
		if ok && (st.Queue < 0 || st.FirstToken < 0 || st.End < 0 || st.End > protocol.MaxDeadline) {
			t.Fatalf("accepted out-of-range %+v from %q", st, s)
		}
	})
}
