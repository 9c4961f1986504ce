package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/sagebench/sagebench/internal/redact"
)

// MetricsFile is the file a Recorder writes into a run directory.
const MetricsFile = "metrics.jsonl"

// Recorder defaults.
const (
	DefaultRecordInterval = time.Second
	DefaultMaxLines       = 86400     // a day of 1 s scrapes of one target
	DefaultMaxBytes       = 256 << 20 // per metrics.jsonl
	// DefaultMaxMetricsLine bounds one metrics.jsonl line as written (after
	// JSON escaping): a scrape whose line would be longer is skipped and
	// noted, and the next one is tried.
	DefaultMaxMetricsLine = 1 << 20
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
	// MaxLineBytes bounds one line (0: DefaultMaxMetricsLine).
	MaxLineBytes int
	Selector     Selector
	Limits       Limits // of one scrape (zero: the defaults)
	// Redact is applied to every name, label and error text kept (see
	// Scraper.Redact); nil keeps them as they are.
	Redact func(string) string
	Client *http.Client
	Now    func() time.Time
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
	if c.MaxLineBytes == 0 {
		c.MaxLineBytes = DefaultMaxMetricsLine
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
	case c.MaxLines < 0 || c.MaxBytes < 0 || c.MaxLineBytes < 0:
		return errors.New("recorder: max lines, max bytes and max line bytes must not be negative")
	}
	return c.Selector.Compile()
}

// Recorder scrapes targets every Interval into a bounded metrics.jsonl
// until its context ends: rec.Start(ctx) before the load, Stop after it.
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
// a failure to create or write the file is. The file only ever ends
// between lines: each line is one write, and a failed or short write is
// cut back to the last whole line (and ends the recording).
func (r *Recorder) Run(ctx context.Context) (RecorderResult, error) {
	var res RecorderResult
	f, err := os.OpenFile(r.cfg.Path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return res, fmt.Errorf("creating %s: %w", r.cfg.Path, err)
	}
	w := &boundedLines{f: f, maxLines: r.cfg.MaxLines, maxBytes: r.cfg.MaxBytes, maxLine: r.cfg.MaxLineBytes}
	err = r.loop(ctx, w, &res)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing %s: %w", r.cfg.Path, cerr)
	}
	res.Lines, res.Truncated = w.lines, w.full
	if w.skipped > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d scrape(s) of /metrics skipped: each would have been a line over %d bytes in %s (the largest %d bytes); the other scrapes were kept",
			w.skipped, r.cfg.MaxLineBytes, MetricsFile, w.largest))
	}
	if w.full {
		res.Notes = append(res.Notes, fmt.Sprintf("%s reached its bound (%d lines or %d bytes); later scrapes were dropped", r.cfg.Path, r.cfg.MaxLines, r.cfg.MaxBytes))
	}
	return res, err
}

func (r *Recorder) loop(ctx context.Context, w *boundedLines, res *RecorderResult) error {
	sc := &Scraper{Client: r.cfg.Client, Timeout: r.cfg.Timeout, Selector: &r.cfg.Selector, Now: r.cfg.Now,
		Limits: r.cfg.Limits, Redact: r.cfg.Redact}
	seen := make([]map[string]bool, len(r.cfg.Targets))
	first := make([]bool, len(r.cfg.Targets))
	dropped := make([]int, len(r.cfg.Targets))
	defer func() { res.Notes = append(res.Notes, droppedNotes(r.cfg.Targets, dropped)...) }()
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
			dropped[i] = max(dropped[i], smp.Dropped)
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

// droppedNotes says, per target, how many series were left out of a
// scrape (the most in one) for a key over MaxKeyBytes.
func droppedNotes(targets []string, dropped []int) []string {
	var notes []string
	for i, n := range dropped {
		if n > 0 {
			notes = append(notes, fmt.Sprintf("%d series of %s left out of %s: a name with labels over %d bytes", n, targets[i], MetricsFile, MaxKeyBytes))
		}
	}
	return notes
}

// maxErrorText bounds the error text of a failed scrape in its line.
const maxErrorText = 1024

// lineOf flattens a sample, adding types for keys not seen before.
func lineOf(smp Sample, seen *map[string]bool) MetricsLine {
	l := MetricsLine{At: smp.At.UTC(), Target: smp.Target}
	if smp.Err != nil {
		l.Error = clip(smp.Err.Error(), maxErrorText)
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

// clip cuts s to n bytes on a UTF-8 boundary, with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// boundedLines writes JSON lines up to a line and byte bound, one write
// per line; a line over maxLine (counted as written, after JSON
// escaping) is skipped and counted, the next one is tried.
type boundedLines struct {
	f        io.Writer
	lines    int
	bytes    int64
	maxLines int
	maxBytes int64
	maxLine  int
	full     bool
	skipped  int
	largest  int
}

func (b *boundedLines) write(l MetricsLine) error {
	if b.full {
		return nil
	}
	buf, err := json.Marshal(finiteValues(l))
	if err != nil {
		return err
	}
	buf = append(buf, '\n')
	if len(buf) > b.maxLine {
		b.skipped++
		b.largest = max(b.largest, len(buf))
		return nil
	}
	if b.lines+1 > b.maxLines || b.bytes+int64(len(buf)) > b.maxBytes {
		b.full = true
		return nil
	}
	n, err := b.f.Write(buf)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if n > 0 { // leave only whole lines behind
			if t, ok := b.f.(interface{ Truncate(int64) error }); ok {
				if terr := t.Truncate(b.bytes); terr != nil {
					err = fmt.Errorf("%w (and cutting it back to its last whole line: %v)", err, terr)
				}
			}
		}
		return err
	}
	b.lines++
	b.bytes += int64(len(buf))
	return nil
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

// Running is a Recorder started in the background.
type Running struct {
	cancel context.CancelFunc
	done   chan struct{}
	res    RecorderResult
	err    error
}

// Start runs the recorder until Stop (or ctx's end).
func (r *Recorder) Start(ctx context.Context) *Running {
	ctx, cancel := context.WithCancel(ctx)
	x := &Running{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(x.done)
		x.res, x.err = r.Run(ctx)
	}()
	return x
}

// Stop ends the recording, waits for the file to be closed and returns
// what was written. It may be called more than once.
func (x *Running) Stop() (RecorderResult, error) {
	x.cancel()
	<-x.done
	return x.res, x.err
}

// MetricsURL derives the /metrics URL of an OpenAI-compatible base URL
// (http://host:port, with or without /v1): http://host:port/metrics.
func MetricsURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("target %q: want an http(s) base URL", redact.URL(base))
	}
	p := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.Path, u.RawQuery, u.Fragment, u.User = strings.TrimSuffix(p, "/")+"/metrics", "", "", nil
	return u.String(), nil
}
