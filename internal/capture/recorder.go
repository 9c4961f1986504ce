package capture

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"
)

// MetricsFile is the file a Recorder writes into a run directory.
const MetricsFile = "metrics.jsonl"

// Recorder defaults.
const (
	DefaultRecordInterval = time.Second
	DefaultMaxLines       = 86400     // a day of 1 s scrapes of one target
	DefaultMaxBytes       = 256 << 20 // per metrics.jsonl
)

// MetricsLine is one line of metrics.jsonl: one scrape of one target.
// Values maps series keys to values; histograms and summaries appear as
// NAME_count{…} and NAME_sum{…}. Types gives the type of each key the
// first time it appears for the target.
type MetricsLine struct {
	At     time.Time          `json:"t"`
	Target string             `json:"target"`
	Error  string             `json:"error,omitempty"`
	Values map[string]float64 `json:"values,omitempty"`
	Types  map[string]string  `json:"types,omitempty"`
}

// RecorderConfig configures the scraping done alongside a run.
type RecorderConfig struct {
	Targets  []string
	Path     string // metrics.jsonl to create
	Interval time.Duration
	Timeout  time.Duration
	MaxLines int
	MaxBytes int64
	Selector Selector
	Client   *http.Client
	Now      func() time.Time
}

// RecorderResult tells what a Recorder wrote.
type RecorderResult struct {
	Lines     int
	Failed    int
	Truncated bool     // stopped writing at MaxLines or MaxBytes
	Notes     []string // e.g. a target without /metrics
}

// Validate applies defaults and checks the config.
func (c *RecorderConfig) Validate() error {
	if c.Interval == 0 {
		c.Interval = DefaultRecordInterval
	}
	if c.Timeout == 0 {
		c.Timeout = min(max(c.Interval, time.Second), 10*time.Second)
	}
	if c.MaxLines == 0 {
		c.MaxLines = DefaultMaxLines
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	switch {
	case c.Path == "":
		return errors.New("recorder: path of metrics.jsonl is empty")
	case len(c.Targets) == 0:
		return errors.New("recorder: no target URL")
	case c.Interval < 10*time.Millisecond:
		return fmt.Errorf("recorder interval %v: want at least 10ms", c.Interval)
	case c.MaxLines < 0 || c.MaxBytes < 0:
		return errors.New("recorder: max lines and max bytes must not be negative")
	}
	return c.Selector.Compile()
}

// Recorder scrapes targets every Interval into a bounded metrics.jsonl
// until its context ends. Use it as: go rec.Run(ctx) next to the load.
type Recorder struct {
	cfg RecorderConfig
}

// NewRecorder validates cfg.
func NewRecorder(cfg RecorderConfig) (*Recorder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Recorder{cfg: cfg}, nil
}

// Run scrapes until ctx is done and returns what it wrote. Scrape
// failures are counted (a target answering nothing usable on its first
// scrape is noted as having no /metrics), never returned as errors; only
// a failure to create or write the file is.
func (r *Recorder) Run(ctx context.Context) (RecorderResult, error) {
	var res RecorderResult
	f, err := os.Create(r.cfg.Path)
	if err != nil {
		return res, fmt.Errorf("creating %s: %w", r.cfg.Path, err)
	}
	w := &boundedLines{w: bufio.NewWriter(f), maxLines: r.cfg.MaxLines, maxBytes: r.cfg.MaxBytes}
	err = r.loop(ctx, w, &res)
	if ferr := w.w.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("writing %s: %w", r.cfg.Path, ferr)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing %s: %w", r.cfg.Path, cerr)
	}
	res.Lines, res.Truncated = w.lines, w.full
	if w.full {
		res.Notes = append(res.Notes, fmt.Sprintf("%s reached its bound (%d lines or %d bytes); later scrapes were dropped", r.cfg.Path, r.cfg.MaxLines, r.cfg.MaxBytes))
	}
	return res, err
}

func (r *Recorder) loop(ctx context.Context, w *boundedLines, res *RecorderResult) error {
	sc := &Scraper{Client: r.cfg.Client, Timeout: r.cfg.Timeout, Selector: &r.cfg.Selector, Now: r.cfg.Now}
	seen := make([]map[string]bool, len(r.cfg.Targets))
	first := make([]bool, len(r.cfg.Targets))
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		for i, smp := range scrapeAll(ctx, sc, r.cfg.Targets) {
			if ctx.Err() != nil {
				return nil
			}
			if smp.Err != nil {
				res.Failed++
				if !first[i] {
					res.Notes = append(res.Notes, fmt.Sprintf("target %s has no usable /metrics: %v", smp.Target, smp.Err))
				}
			}
			first[i] = true
			if err := w.write(lineOf(smp, &seen[i])); err != nil {
				return fmt.Errorf("writing %s: %w", r.cfg.Path, err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// lineOf flattens a sample, adding types for keys not seen before.
func lineOf(smp Sample, seen *map[string]bool) MetricsLine {
	l := MetricsLine{At: smp.At.UTC(), Target: smp.Target}
	if smp.Err != nil {
		l.Error = smp.Err.Error()
		return l
	}
	if *seen == nil {
		*seen = map[string]bool{}
	}
	l.Values = map[string]float64{}
	add := func(key, typ string, v float64) {
		l.Values[key] = v
		if !(*seen)[key] {
			(*seen)[key] = true
			if l.Types == nil {
				l.Types = map[string]string{}
			}
			l.Types[key] = typ
		}
	}
	for _, s := range smp.Series {
		switch s.Type {
		case TypeHistogram, TypeSummary:
			add(SeriesKey(s.Name+"_count", s.Labels), TypeCounter, s.Count)
			add(SeriesKey(s.Name+"_sum", s.Labels), TypeCounter, s.Sum)
		default:
			add(s.Key(), s.Type, s.Value)
		}
	}
	return l
}

// boundedLines writes JSON lines up to a line and byte bound.
type boundedLines struct {
	w        *bufio.Writer
	lines    int
	bytes    int64
	maxLines int
	maxBytes int64
	full     bool
}

func (b *boundedLines) write(l MetricsLine) error {
	if b.full {
		return nil
	}
	buf, err := json.Marshal(finiteValues(l))
	if err != nil {
		return err
	}
	if b.lines+1 > b.maxLines || b.bytes+int64(len(buf))+1 > b.maxBytes {
		b.full = true
		return nil
	}
	b.lines++
	b.bytes += int64(len(buf)) + 1
	_, err = b.w.Write(append(buf, '\n'))
	return err
}

// finiteValues drops NaN and ±Inf values, which JSON cannot hold.
func finiteValues(l MetricsLine) MetricsLine {
	for k, v := range l.Values {
		if num(v) == nil {
			delete(l.Values, k)
		}
	}
	return l
}
