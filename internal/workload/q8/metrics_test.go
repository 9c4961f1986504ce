package q8

import (
	"math"
	"strings"
	"testing"
)

func TestParseProcessMetrics(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		rss, fds float64
		ok       bool
	}{
		{"both", "# HELP x\nprocess_open_fds 12\nprocess_resident_memory_bytes 2.097152e+06\n", 2, 12, true},
		{"timestamp suffix", "process_open_fds 7 1700000000\nprocess_resident_memory_bytes 1048576 1700000000\n", 1, 7, true},
		{"missing fds", "process_resident_memory_bytes 1048576\n", 1, 0, false},
		{"garbage value", "process_open_fds abc\nprocess_resident_memory_bytes 1048576\n", 1, 0, false},
		{"labelled lookalike", "process_open_fds{x=\"1\"} 3\nprocess_resident_memory_bytes 1\n", 1.0 / (1 << 20), 0, false},
		{"NaN", "process_open_fds NaN\nprocess_resident_memory_bytes 1\n", 0, 0, false},
		{"empty", "", 0, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rss, fds, ok := parseProcessMetrics(strings.NewReader(tc.in))
			if ok != tc.ok || (tc.ok && (math.Abs(rss-tc.rss) > 1e-9 || fds != tc.fds)) {
				t.Fatalf("got %v %v %v; want %v %v %v", rss, fds, ok, tc.rss, tc.fds, tc.ok)
			}
		})
	}
}

func FuzzParseProcessMetrics(f *testing.F) {
	f.Add("process_open_fds 12\nprocess_resident_memory_bytes 2e6\n")
	f.Add("process_open_fds NaN\nprocess_resident_memory_bytes +Inf\n")
	f.Fuzz(func(t *testing.T, in string) {
		rss, fds, ok := parseProcessMetrics(strings.NewReader(in))
		if ok && (math.IsNaN(rss) || math.IsNaN(fds) || rss < 0 || fds < 0 || math.IsInf(rss, 0) || math.IsInf(fds, 0)) {
			t.Fatalf("ok with %v %v", rss, fds)
		}
	})
}
