package traffic_test

import (
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/traffic"
)

// TestOutputCheck: a target that stops early (an EOS it was not told to
// ignore) shows in the note; one that generates what was intended does
// not; failed requests and requests without usage do not count.
func TestOutputCheck(t *testing.T) {
	tests := []struct {
		name     string
		received []int
		want     string
	}{
		{"exact", []int{32, 32, 32}, ""},
		{"within 5 %", []int{31, 32, 32}, ""},
		{"stops early", []int{16, 15, 17}, "16.0 tokens per request on average against 32.0 intended (50 %) over 3 requests"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c traffic.OutputCheck
			for _, n := range tc.received {
				c.Add(&record.Request{OK: true, OutputTokens: 32, OutputTok: n})
			}
			c.Add(&record.Request{OK: false, OutputTokens: 32, OutputTok: 1})
			c.Add(&record.Request{OK: true, OutputTokens: 32})
			if got := c.Note(); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("note %q, want %q", got, tc.want)
			}
		})
	}
}
