package load

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseTrace(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []time.Duration
		err  string
	}{
		{"ms and s, unsorted, blank lines", "{\"offset_ms\": 2.5}\n\n{\"offset_s\": 0.001, \"tokens\": 9}\r\n{\"offset_ms\":0}\n",
			[]time.Duration{0, time.Millisecond, 2500 * time.Microsecond}, ""},
		{"not json", "{\"offset_ms\": 1}\nhello\n", nil, "t.jsonl:2: not a JSON object"},
		{"missing offset", "{\"at\": 1}\n", nil, "t.jsonl:1: missing offset_ms"},
		{"both", "{\"offset_ms\": 1, \"offset_s\": 1}\n", nil, "both offset_ms and offset_s"},
		{"negative", "{\"offset_ms\": -1}\n", nil, "out of range"},
		{"huge", "{\"offset_s\": 1e300}\n", nil, "out of range"},
		{"empty", "\n\n", nil, "trace has no arrivals"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTrace(strings.NewReader(tc.in), "t.jsonl")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestTraceSchedule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	var sb strings.Builder
	for i := range 10 {
		fmt.Fprintf(&sb, "{\"offset_ms\": %d}\n", i*100)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := NewSchedule(ScheduleConfig{Process: ProcessTrace, TraceFile: path, Duration: 450 * time.Millisecond}, 0)
	if err != nil || s.Len() != 5 || s.Span() != 450*time.Millisecond {
		t.Fatalf("duration cut: len %d span %v err %v", s.Len(), s.Span(), err)
	}
	s, err = NewSchedule(ScheduleConfig{Process: ProcessTrace, TraceFile: path, Count: 3}, 0)
	if err != nil || s.Len() != 3 || s.Offsets[2] != 200*time.Millisecond {
		t.Fatalf("count cut: %v %v", s.Offsets, err)
	}
	_, err = NewSchedule(ScheduleConfig{Process: ProcessTrace, TraceFile: path + ".missing", Count: 3}, 0)
	if err == nil || !strings.Contains(err.Error(), "schedule.trace_file") {
		t.Fatalf("missing file: %v", err)
	}
}

func FuzzTrace(f *testing.F) {
	f.Add([]byte("{\"offset_ms\": 1}\n{\"offset_s\": 2}\n"))
	f.Add([]byte("{\"offset_ms\": -0}\n\n"))
	f.Add([]byte("{\"offset_ms\": 1e400}"))
	f.Add([]byte("[1,2]\n{}\nnull\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		offs, err := ParseTrace(strings.NewReader(string(in)), "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz") && !strings.HasPrefix(err.Error(), "reading trace fuzz") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(offs) == 0 || !slices.IsSorted(offs) || offs[0] < 0 || offs[len(offs)-1] > maxOffset {
			t.Fatalf("bad offsets %v", offs)
		}
	})
}

// TestLengthsTrace: a trace with request lengths (trace_format) windows
// by trace_start, speedup and count, and keeps each arrival's entry;
// bad keys are named.
func TestLengthsTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": 1}\n", 1000+i*100, 10+i)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	s, err := NewSchedule(ScheduleConfig{Process: ProcessTrace, TraceFile: path, TraceFormat: "mooncake", TraceStart: 200 * time.Millisecond, Speedup: 2, Count: 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 5 || len(s.Entries) != 5 || s.Entries[0].Input != 12 || s.Offsets[4] != 200*time.Millisecond {
		t.Errorf("schedule %v, entries %+v", s.Offsets, s.Entries)
	}
	for _, tc := range []struct {
		cfg  ScheduleConfig
		want string
	}{
		{ScheduleConfig{Process: ProcessTrace, TraceFile: path, TraceFormat: "parquet", Count: 1}, "schedule.trace_format \"parquet\""},
		{ScheduleConfig{Process: ProcessTrace, TraceFile: path, TraceFormat: "azure", Speedup: -1, Count: 1}, "schedule.speedup"},
	} {
		if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
