package load

import (
	"fmt"
	"math"
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
		{"a line over 1 MiB", "{\"offset_ms\": 1}\n{\"offset_ms\": 1, \"x\": \"" + strings.Repeat("a", 1<<20) + "\"}\n", nil, "t.jsonl:2: longer than 1048576 bytes"},
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

// TestSpeedupBoundedAndHonoured (issue 41, hole 4): speedup is bounded
// (1e-9 and 1e9 refused by Validate, naming the field), every trace
// format honours speedup and trace_start — offsets too — and a slowed
// trace past the 720 h cap is refused instead of wrapping to a negative
// duration (1e-9 on a Mooncake trace gave −2,562,047 h, exit 0).
func TestSpeedupBoundedAndHonoured(t *testing.T) {
	dir := t.TempDir()
	var moon, offs strings.Builder
	for i := range 10 {
		fmt.Fprintf(&moon, "{\"timestamp\": %d, \"input_length\": 5, \"output_length\": 1}\n", i*1000)
		fmt.Fprintf(&offs, "{\"offset_ms\": %d}\n", i*1000)
	}
	files := map[string]string{"mooncake": moon.String(), TraceOffsets: offs.String(),
		"burstgpt": "Timestamp,Request tokens,Response tokens\n0,5,1\n1,5,1\n2,5,1\n3,5,1\n4,5,1\n5,5,1\n6,5,1\n7,5,1\n8,5,1\n9,5,1\n"}
	for format, body := range files {
		path := filepath.Join(dir, format)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := ScheduleConfig{Process: ProcessTrace, TraceFile: path, TraceFormat: format, Count: 100}
		for _, sp := range []float64{1e-9, 1e9, math.NaN(), 1e-4, 1e4} {
			c := cfg
			c.Speedup = sp
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "schedule.speedup") {
				t.Errorf("%s: speedup %v: %v, want refused naming schedule.speedup", format, sp, err)
			}
		}
		c := cfg
		c.Speedup, c.TraceStart = 4, 2*time.Second
		s, err := NewSchedule(c, 1)
		if err != nil || s.Len() != 8 || s.Offsets[0] != 0 || s.Offsets[7] != 1750*time.Millisecond {
			t.Errorf("%s: speedup 4 from 2 s: %v, %v; want 8 arrivals 250 ms apart", format, s.Offsets, err)
		}
		c.Speedup, c.TraceStart = 1e-3, 0 // 9 s × 1000 = 2.5 h: within the cap
		if s, err := NewSchedule(c, 1); err != nil || s.Offsets[9] != 9000*time.Second {
			t.Errorf("%s: speedup 1e-3: %v, %v", format, s.Offsets, err)
		}
	}
	// a trace of 30 days slowed down 1000 times: refused, not wrapped
	long := filepath.Join(dir, "long.jsonl")
	os.WriteFile(long, []byte("{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n{\"timestamp\": 2592000000, \"input_length\": 5, \"output_length\": 1}\n"), 0o644)
	_, err := NewSchedule(ScheduleConfig{Process: ProcessTrace, TraceFile: long, TraceFormat: "mooncake", Count: 10, Speedup: 1e-3}, 1)
	if err == nil || !strings.Contains(err.Error(), "schedule.speedup") || !strings.Contains(err.Error(), "720h") {
		t.Errorf("a 30-day trace slowed 1000×: %v, want refused naming speedup and the 720h cap", err)
	}
}

// FuzzTraceWindow: trace_start and speedup over any offsets give sorted,
// non-negative offsets within the 720 h cap, or an error naming
// speedup or the file — never a wrapped duration.
func FuzzTraceWindow(f *testing.F) {
	f.Add([]byte("{\"offset_ms\": 1}\n{\"offset_s\": 2}\n"), int64(0), 1.0)
	f.Add([]byte("{\"offset_s\": 2592000}\n"), int64(0), 1e-3)
	f.Add([]byte("{\"offset_ms\": 5}\n{\"offset_ms\": 9}\n"), int64(6*time.Millisecond), 1000.0)
	f.Add([]byte("{\"offset_ms\": 5}\n"), int64(1<<62), 1e-9)
	f.Fuzz(func(t *testing.T, in []byte, start int64, speed float64) {
		offs, err := ParseTrace(strings.NewReader(string(in)), "fuzz")
		if err != nil {
			return
		}
		cfg := ScheduleConfig{Process: ProcessTrace, TraceFile: "fuzz", Count: 10, TraceStart: time.Duration(start), Speedup: speed}
		if cfg.Validate() != nil {
			return
		}
		out, err := windowOffsets(offs, cfg)
		if err != nil {
			return
		}
		if !slices.IsSorted(out) || (len(out) > 0 && (out[0] < 0 || out[len(out)-1] > maxOffset)) {
			t.Fatalf("offsets %v from %v, start %v, speedup %v", out, offs, cfg.TraceStart, speed)
		}
	})
}

// TestCheckArrival: an arrival time that is NaN, ±Inf or past 720 h is
// refused before it becomes a Duration (time.Duration(NaN) is undefined).
func TestCheckArrival(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), maxOffset.Seconds() + 1, 1e300} {
		if err := checkArrival(v, 0); err == nil {
			t.Errorf("checkArrival(%v) accepted", v)
		}
	}
	if err := checkArrival(maxOffset.Seconds(), 0); err != nil {
		t.Errorf("the cap itself: %v", err)
	}
}
