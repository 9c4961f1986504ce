package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"
)

// TimeSeries is one series of one target as recorded in metrics.jsonl.
type TimeSeries struct {
	Target string
	Key    string
	Type   string
	At     []time.Time
	Values []float64
}

// Timeline is metrics.jsonl read back: every series in key order, and
// how many scrapes failed.
type Timeline struct {
	Series []*TimeSeries
	Lines  int
	Failed int
}

// maxMetricsLine bounds one metrics.jsonl line.
const maxMetricsLine = 64 << 20

// ReadMetricsFile reads metrics.jsonl at path.
func ReadMetricsFile(path string) (*Timeline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading metrics: %w", err)
	}
	defer f.Close()
	return ReadMetrics(f, path)
}

// ReadMetrics reads metrics.jsonl lines from r (named file in errors).
// Bad lines are reported (the first 20, then a count) in the returned
// error, next to a Timeline of the good ones.
func ReadMetrics(r io.Reader, file string) (*Timeline, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxMetricsLine)
	tl := &Timeline{}
	index := map[string]*TimeSeries{}
	types := map[string]string{}
	var errs []error
	bad, n := 0, 0
	for sc.Scan() {
		n++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var l MetricsLine
		if err := json.Unmarshal(text, &l); err != nil || l.Target == "" || l.At.IsZero() {
			bad++
			if bad <= 20 {
				errs = append(errs, fmt.Errorf("%s:%d: not a metrics line (want t, target, values): %v", file, n, err))
			}
			continue
		}
		tl.addLine(l, index, types)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s:%d: %w", file, n+1, err))
	}
	if bad > 20 {
		errs = append(errs, fmt.Errorf("%s: %d more unreadable lines", file, bad-20))
	}
	sort.Slice(tl.Series, func(i, j int) bool {
		if tl.Series[i].Target != tl.Series[j].Target {
			return tl.Series[i].Target < tl.Series[j].Target
		}
		return tl.Series[i].Key < tl.Series[j].Key
	})
	return tl, errors.Join(errs...)
}

func (tl *Timeline) addLine(l MetricsLine, index map[string]*TimeSeries, types map[string]string) {
	tl.Lines++
	if l.Error != "" {
		tl.Failed++
		return
	}
	for k, t := range l.Types {
		types[l.Target+" "+k] = t
	}
	keys := make([]string, 0, len(l.Values))
	for k := range l.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		id := l.Target + " " + k
		ts := index[id]
		if ts == nil {
			ts = &TimeSeries{Target: l.Target, Key: k, Type: types[id]}
			if ts.Type == "" {
				ts.Type = TypeUntyped
			}
			index[id] = ts
			tl.Series = append(tl.Series, ts)
		}
		ts.At = append(ts.At, l.At)
		ts.Values = append(ts.Values, l.Values[k])
	}
}

// Rates turns a counter series into per-second rates between consecutive
// points (a decrease is a reset: the new value is the increase). The
// result has one point less, stamped at the later time.
func (ts *TimeSeries) Rates() ([]time.Time, []float64) {
	var at []time.Time
	var rs []float64
	for i := 1; i < len(ts.Values); i++ {
		dt := ts.At[i].Sub(ts.At[i-1]).Seconds()
		if dt <= 0 {
			continue
		}
		d := ts.Values[i] - ts.Values[i-1]
		if d < 0 {
			d = ts.Values[i]
		}
		at = append(at, ts.At[i])
		rs = append(rs, d/dt)
	}
	return at, rs
}

// RunMetric condenses one recorded series for run.json: a gauge's mean,
// p95 and max value, or a counter's mean, p95 and max per-second rate.
type RunMetric struct {
	Target string  `json:"target"`
	Key    string  `json:"key"`
	Type   string  `json:"type"`
	Of     string  `json:"of"` // value or rate
	Mean   float64 `json:"mean"`
	P95    float64 `json:"p95"`
	Max    float64 `json:"max"`
}

// Condense summarises every series of tl.
func (tl *Timeline) Condense() []RunMetric {
	out := make([]RunMetric, 0, len(tl.Series))
	for _, ts := range tl.Series {
		m := RunMetric{Target: ts.Target, Key: ts.Key, Type: ts.Type, Of: "value"}
		xs := ts.Values
		if ts.Type == TypeCounter {
			_, xs = ts.Rates()
			m.Of = "rate"
		}
		s := Summarize(xs)
		if s.N == 0 {
			continue
		}
		m.Mean, m.P95, m.Max = s.Mean, s.P95, s.Max
		out = append(out, m)
	}
	return out
}

// Extra renders condensed metrics as run.json summary extras, keyed
// "metrics:KEY:p95" and so on (the target is left out: a run usually has
// one; with several, the later target's value wins).
func Extra(ms []RunMetric) map[string]float64 {
	out := make(map[string]float64, 3*len(ms))
	for _, m := range ms {
		out["metrics:"+m.Key+":mean"] = m.Mean
		out["metrics:"+m.Key+":p95"] = m.P95
		out["metrics:"+m.Key+":max"] = m.Max
	}
	return out
}
