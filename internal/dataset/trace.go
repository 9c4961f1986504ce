package dataset

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Trace formats.
const (
	Mooncake = "mooncake"
	Azure    = "azure"
	BurstGPT = "burstgpt"
)

// TraceFormats lists the formats ReadTrace takes.
func TraceFormats() []string { return []string{Mooncake, Azure, BurstGPT} }

// MaxEntries bounds what one file may hold.
const MaxEntries = 10_000_000

// MaxHashIDs bounds the Mooncake hash_ids of one trace together (160 MB
// held; the public traces have ~30 a request): one line is bounded by
// MaxValueBytes, the lines together by this.
const MaxHashIDs = 20_000_000

// maxLine bounds one line of a trace (a Mooncake line with a long
// hash_ids list stays far below).
const maxLine = 4 << 20

// Entry is one request of a trace: when it arrived (offset from the
// trace's first request) and its lengths in tokens; HashIDs are a
// Mooncake request's prefix blocks.
type Entry struct {
	At            time.Duration
	Input, Output int
	HashIDs       []int64
}

// Error is a bad record: File:Line and the Field, with what is wrong.
type Error struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: field %s: %v", e.File, e.Line, e.Field, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ReadTrace reads a trace file of format, sorted by arrival (ties keep
// file order), offsets from the first arrival.
func ReadTrace(path, format string) ([]Entry, error) {
	f, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTrace(f, path, format)
}

// ParseTrace is ReadTrace over r (name labels errors).
func ParseTrace(r io.Reader, name, format string) ([]Entry, error) {
	var es []Entry
	var err error
	switch format {
	case Mooncake:
		es, err = parseMooncake(r, name, MaxHashIDs)
	case Azure:
		es, err = parseCSV(r, name, azureColumns)
	case BurstGPT:
		es, err = parseCSV(r, name, burstColumns)
	default:
		return nil, fmt.Errorf("trace format %q: use %s", format, strings.Join(TraceFormats(), ", "))
	}
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, fmt.Errorf("%s: the trace has no requests", name)
	}
	slices.SortStableFunc(es, func(a, b Entry) int { return int(a.At - b.At) })
	first := es[0].At
	for i := range es {
		es[i].At -= first
	}
	return es, nil
}

type mooncakeLine struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	HashIDs      []int64  `json:"hash_ids"`
}

func parseMooncake(r io.Reader, name string, maxHashIDs int) ([]Entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var es []Entry
	line, hashIDs := 1, 0
	for ; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		bad := func(field string, err error) error { return &Error{File: name, Line: line, Field: field, Err: err} }
		var m mooncakeLine
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, bad("", fmt.Errorf("not a JSON object of a Mooncake trace: %v", err))
		}
		switch {
		case m.Timestamp == nil:
			return nil, bad("timestamp", errors.New("missing (milliseconds)"))
		case m.InputLength == nil:
			return nil, bad("input_length", errors.New("missing"))
		case m.OutputLength == nil:
			return nil, bad("output_length", errors.New("missing"))
		}
		at, err := millis(*m.Timestamp)
		if err != nil {
			return nil, bad("timestamp", err)
		}
		if err := checkLength(*m.InputLength, 1); err != nil {
			return nil, bad("input_length", err)
		}
		if err := checkLength(*m.OutputLength, 0); err != nil {
			return nil, bad("output_length", err)
		}
		if len(es) == MaxEntries {
			return nil, bad("", fmt.Errorf("more than %d requests; cut the trace", MaxEntries))
		}
		if hashIDs += len(m.HashIDs); hashIDs > maxHashIDs {
			return nil, bad("hash_ids", fmt.Errorf("more than %d hash ids in the trace so far (8 bytes held each); cut the trace", maxHashIDs))
		}
		es = append(es, Entry{At: at, Input: *m.InputLength, Output: *m.OutputLength, HashIDs: m.HashIDs})
	}
	if err := scanError(sc, name, line); err != nil {
		return nil, err
	}
	return es, nil
}

// maxOffset bounds a trace's span (a year).
const maxOffset = 366 * 24 * time.Hour

// MaxTraceSpan is the longest a trace file may span (a year): a later
// arrival is refused when the file is read.
const MaxTraceSpan = maxOffset

// Scale returns d × f in checked arithmetic: NaN or a negative product is
// 0, and a product past the largest Duration saturates at it (time.
// Duration(float) of an out-of-range value is undefined and wraps on
// amd64: a trace slowed down by 1e-9 became −2,562,047 h).
func Scale(d time.Duration, f float64) time.Duration {
	v := float64(d) * f
	switch {
	case !(v > 0): // NaN too
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	}
	return time.Duration(math.Round(v))
}

func millis(v float64) (time.Duration, error) {
	if math.IsNaN(v) || v < 0 || v > float64(maxOffset/time.Millisecond) {
		return 0, fmt.Errorf("%v is not a time in ms between 0 and a year", v)
	}
	return time.Duration(math.Round(v * 1e6)), nil
}

func checkLength(n, lo int) error {
	if n < lo || n > 1<<20 {
		return fmt.Errorf("%d tokens: must be in [%d, %d]", n, lo, 1<<20)
	}
	return nil
}

// csvColumns names the columns a CSV trace needs and how its time reads.
type csvColumns struct {
	time, input, output string
	parseTime           func(string) (time.Duration, error)
}

var azureColumns = csvColumns{"TIMESTAMP", "ContextTokens", "GeneratedTokens", azureTime}
var burstColumns = csvColumns{"Timestamp", "Request tokens", "Response tokens", seconds}

// azureTime reads "2023-11-16 18:15:46.6805900" (the trace's form: up to
// 7 fractional digits) as an offset from the Unix epoch.
func azureTime(s string) (time.Duration, error) {
	t, err := time.Parse("2006-01-02 15:04:05.999999999", strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a time like 2023-11-16 18:15:46.6805900", s)
	}
	return time.Duration(t.UnixNano()), nil
}

// seconds reads BurstGPT's seconds from the trace's start.
func seconds(s string) (time.Duration, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > maxOffset.Seconds() {
		return 0, fmt.Errorf("%q is not a time in seconds between 0 and a year", s)
	}
	return time.Duration(math.Round(v * 1e9)), nil
}

func parseCSV(r io.Reader, name string, cols csvColumns) ([]Entry, error) {
	vb := newValueBound(r)
	cr := csv.NewReader(vb)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, &Error{File: name, Line: 1, Err: fmt.Errorf("reading the header: %v", err)}
	}
	idx := map[string]int{}
	for i, h := range head {
		idx[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range []string{cols.time, cols.input, cols.output} {
		if _, ok := idx[c]; !ok {
			return nil, &Error{File: name, Line: 1, Field: c, Err: fmt.Errorf("column missing from the header %q", strings.Join(head, ","))}
		}
	}
	var es []Entry
	last := 1 // the line of the last record read
	for {
		vb.mark = cr.InputOffset()
		rec, err := cr.Read()
		if err == io.EOF {
			return es, nil
		}
		if err != nil {
			line := last + 1
			if pe := (*csv.ParseError)(nil); errors.As(err, &pe) {
				line = pe.Line
			}
			return nil, &Error{File: name, Line: line, Err: err}
		}
		line, _ := cr.FieldPos(0)
		last = line
		e, err := csvEntry(rec, idx, cols)
		if err != nil {
			err.(*Error).File, err.(*Error).Line = name, line
			return nil, err
		}
		if len(es) == MaxEntries {
			return nil, &Error{File: name, Line: line, Err: fmt.Errorf("more than %d requests; cut the trace", MaxEntries)}
		}
		es = append(es, e)
	}
}

func csvEntry(rec []string, idx map[string]int, cols csvColumns) (Entry, error) {
	field := func(c string) (string, error) {
		if i := idx[c]; i < len(rec) {
			return rec[i], nil
		}
		return "", &Error{Field: c, Err: errors.New("missing on this row")}
	}
	var e Entry
	ts, err := field(cols.time)
	if err != nil {
		return e, err
	}
	if e.At, err = cols.parseTime(ts); err != nil {
		return e, &Error{Field: cols.time, Err: err}
	}
	for _, f := range []struct {
		col string
		dst *int
		lo  int
	}{{cols.input, &e.Input, 1}, {cols.output, &e.Output, 0}} {
		s, err := field(f.col)
		if err != nil {
			return e, err
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err == nil {
			err = checkLength(n, f.lo)
		} else {
			err = fmt.Errorf("%q is not a whole number of tokens", s)
		}
		if err != nil {
			return e, &Error{Field: f.col, Err: err}
		}
		*f.dst = n
	}
	return e, nil
}

// Window cuts and speeds up a trace: the requests arriving in
// [Start, Start+Duration) (Duration 0: to the end), at most Count of
// them (0: all), their offsets from Start divided by Speedup (0: 1).
type Window struct {
	Start, Duration time.Duration
	Count           int
	Speedup         float64
}

// Apply returns the entries of es inside w, re-based and sped up.
func (w Window) Apply(es []Entry) []Entry {
	speed := w.Speedup
	if speed <= 0 {
		speed = 1
	}
	var out []Entry
	for _, e := range es {
		if e.At < w.Start || (w.Duration > 0 && e.At >= w.Start+w.Duration) {
			continue
		}
		if w.Count > 0 && len(out) == w.Count {
			break
		}
		e.At = Scale(e.At-w.Start, 1/speed)
		out = append(out, e)
	}
	return out
}
