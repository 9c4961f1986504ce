package load

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/sagebench/sagebench/internal/dataset"
)

// traceLine is one line of a trace file. Exactly one of the two fields
// must be present; other keys are ignored (traces often carry more).
type traceLine struct {
	OffsetMS *float64 `json:"offset_ms"`
	OffsetS  *float64 `json:"offset_s"`
}

// maxTraceLine bounds one line of an offsets trace.
const maxTraceLine = 1 << 20

// ParseTrace reads a JSONL trace: one JSON object per line with either
// "offset_ms" (milliseconds) or "offset_s" (seconds) from the start of the
// run. Blank lines are skipped; offsets need not be sorted (they are
// sorted here). name is used in errors ("name:line: …").
func ParseTrace(r io.Reader, name string) ([]time.Duration, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxTraceLine)
	var offs []time.Duration
	line := 1
	for ; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		off, err := parseTraceLine(b)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if len(offs) == MaxArrivals {
			return nil, fmt.Errorf("%s:%d: more than %d arrivals; split the trace", name, line, MaxArrivals)
		}
		offs = append(offs, off)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%s:%d: longer than %d bytes, the bound of one line of an offsets trace", name, line, maxTraceLine)
	} else if err != nil {
		return nil, fmt.Errorf("reading trace %s: %w", name, err)
	}
	if len(offs) == 0 {
		return nil, fmt.Errorf("%s: trace has no arrivals; add lines like {\"offset_ms\": 12.5}", name)
	}
	slices.Sort(offs)
	return offs, nil
}

func parseTraceLine(b []byte) (time.Duration, error) {
	var tl traceLine
	if err := json.Unmarshal(b, &tl); err != nil {
		return 0, fmt.Errorf("not a JSON object with offset_ms or offset_s: %v", err)
	}
	var v, scale float64
	switch {
	case tl.OffsetMS != nil && tl.OffsetS != nil:
		return 0, fmt.Errorf("both offset_ms and offset_s given; keep one")
	case tl.OffsetMS != nil:
		v, scale = *tl.OffsetMS, 1e6
	case tl.OffsetS != nil:
		v, scale = *tl.OffsetS, 1e9
	default:
		return 0, fmt.Errorf("missing offset_ms (or offset_s)")
	}
	ns := v * scale
	if math.IsNaN(ns) || ns < 0 || ns > float64(maxOffset) {
		return 0, fmt.Errorf("offset %v is out of range; it must be >= 0 and at most %v", v, maxOffset)
	}
	return time.Duration(math.Round(ns)), nil
}

// TraceOffsets is the default trace format: JSONL of offsets.
const TraceOffsets = "offsets"

// traceSchedule loads cfg.TraceFile and cuts it at Count / Duration.
func traceSchedule(cfg ScheduleConfig) (Schedule, error) {
	if cfg.TraceFormat != "" && cfg.TraceFormat != TraceOffsets {
		return lengthsSchedule(cfg)
	}
	f, err := dataset.OpenFile(cfg.TraceFile)
	if err != nil {
		return Schedule{}, fmt.Errorf("schedule.trace_file: %w", err)
	}
	defer f.Close()
	offs, err := ParseTrace(f, cfg.TraceFile)
	if err != nil {
		return Schedule{}, fmt.Errorf("schedule.trace_file: %w", err)
	}
	if offs, err = windowOffsets(offs, cfg); err != nil {
		return Schedule{}, err
	}
	if cfg.Duration > 0 {
		n, _ := slices.BinarySearch(offs, cfg.Duration)
		offs = offs[:n]
	}
	if cfg.Count > 0 && len(offs) > cfg.Count {
		offs = offs[:cfg.Count]
	}
	s := Schedule{Offsets: offs, Length: cfg.Duration}
	if s.Length == 0 && len(offs) > 0 {
		s.Length = offs[len(offs)-1]
	}
	return s, nil
}

// lengthsSchedule reads a trace with request lengths (dataset.ReadTrace)
// and windows it: arrivals from TraceStart on, sped up, cut at Duration
// (of replay time) and Count; each arrival keeps its entry.
func lengthsSchedule(cfg ScheduleConfig) (Schedule, error) {
	es, err := dataset.ReadTrace(cfg.TraceFile, cfg.TraceFormat)
	if err != nil {
		return Schedule{}, fmt.Errorf("schedule.trace_file: %w", err)
	}
	speed := speedOf(cfg)
	w := dataset.Window{Start: cfg.TraceStart, Duration: dataset.Scale(cfg.Duration, speed), Count: min(cfg.Count, MaxArrivals), Speedup: speed}
	if cfg.Count == 0 {
		w.Count = MaxArrivals
	}
	es = w.Apply(es)
	if len(es) == 0 {
		return Schedule{}, fmt.Errorf("schedule.trace_file %s: no requests from trace_start %v on", cfg.TraceFile, cfg.TraceStart)
	}
	if err := checkSpan(cfg, es[len(es)-1].At); err != nil {
		return Schedule{}, err
	}
	s := Schedule{Offsets: make([]time.Duration, len(es)), Length: cfg.Duration, Entries: es}
	for i, e := range es {
		s.Offsets[i] = e.At
	}
	if s.Length == 0 {
		s.Length = s.Offsets[len(s.Offsets)-1]
	}
	return s, nil
}

// speedOf is cfg.Speedup, 1 when unset.
func speedOf(cfg ScheduleConfig) float64 {
	if cfg.Speedup <= 0 {
		return 1
	}
	return cfg.Speedup
}

// windowOffsets applies trace_start and speedup to sorted offsets, as
// dataset.Window does to a trace with lengths: the offsets from
// TraceStart on, re-based, their gaps divided by Speedup (saturating,
// never wrapping), and refuses a replay longer than maxOffset.
func windowOffsets(offs []time.Duration, cfg ScheduleConfig) ([]time.Duration, error) {
	speed := speedOf(cfg)
	if cfg.TraceStart == 0 && speed == 1 {
		return offs, nil
	}
	i, _ := slices.BinarySearch(offs, cfg.TraceStart)
	out := offs[i:]
	if len(out) == 0 {
		return nil, fmt.Errorf("schedule.trace_file %s: no arrivals from trace_start %v on", cfg.TraceFile, cfg.TraceStart)
	}
	for k := range out {
		out[k] = dataset.Scale(out[k]-cfg.TraceStart, 1/speed)
	}
	return out, checkSpan(cfg, out[len(out)-1])
}

// checkSpan refuses a replayed trace whose last arrival is past
// maxOffset (a trace slowed down too far).
func checkSpan(cfg ScheduleConfig, last time.Duration) error {
	if last > maxOffset {
		return fmt.Errorf("schedule.speedup %g: the trace would replay over more than %v (its last arrival at %v); raise schedule.speedup or set schedule.count",
			speedOf(cfg), maxOffset, last)
	}
	return nil
}
