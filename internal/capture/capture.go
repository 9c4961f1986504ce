package capture

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/redact"
)

// Defaults of Config, those of the Sovereign-Mohawk stress capture.
const (
	DefaultWindows = 3
	DefaultWindow  = 200 * time.Second
	// DefaultInterval is the scrape period inside a window (shortened to
	// Window/2 for short windows).
	DefaultInterval = 5 * time.Second
)

// Config describes one capture. The zero value plus Targets is the
// default capture (3 windows of 200 s).
type Config struct {
	Targets []string // exporter URLs (http or https)
	// Prometheus, when set, is a Prometheus server to query instead of
	// scraping Targets: each of Queries is evaluated over the capture's
	// span ending at End (zero: now), without waiting.
	Prometheus string
	Queries    []string
	End        time.Time
	Windows    int
	Window     time.Duration
	Interval   time.Duration
	Timeout    time.Duration // per scrape; 0: Interval within [1 s, 10 s]
	Selector   Selector
	Processes  []string // process names (/proc/PID/comm) to snapshot
	PIDs       []int
	Client     *http.Client
	Now        func() time.Time
	// Progress, when set, is called after every scrape tick.
	Progress func(Progress)
	// Redact, when set, is applied to the names, labels and error texts
	// kept (see Scraper.Redact).
	Redact func(string) string
}

// Progress tells how far a capture is: Tick of Ticks scrape ticks after
// the first, Window of Windows windows complete.
type Progress struct {
	Tick, Ticks     int
	Window, Windows int
}

// WindowDone reports whether this tick completed a window.
func (p Progress) WindowDone() bool {
	return p.Tick > 0 && p.Ticks > 0 && p.Tick%(p.Ticks/p.Windows) == 0
}

// ErrAllFailed is returned (wrapped) when no scrape of any target succeeded.
var ErrAllFailed = errors.New("every scrape failed")

// Validate checks the config after defaults are applied.
func (c *Config) Validate() error {
	c.defaults()
	if err := c.validateSource(); err != nil {
		return err
	}
	switch {

	case c.Windows < 1:
		return fmt.Errorf("windows %d: want at least 1", c.Windows)
	case c.Window < 10*time.Millisecond:
		return fmt.Errorf("window %v: want at least 10ms", c.Window)
	case c.Interval <= 0 || c.Interval > c.Window:
		return fmt.Errorf("interval %v: want more than 0 and at most the window (%v)", c.Interval, c.Window)
	case c.Windows*c.ticksPerWindow() > 100000:
		return fmt.Errorf("windows × window / interval = %d scrapes per target: more than 100000; lengthen --interval", c.Windows*c.ticksPerWindow())
	}
	for _, p := range c.PIDs {
		if p <= 0 {
			return fmt.Errorf("pid %d: want a positive process id", p)
		}
	}
	return c.Selector.Compile()
}

func (c *Config) validateSource() error {
	if c.Prometheus != "" {
		return c.validateQuery()
	}
	if len(c.Targets) == 0 {
		return errors.New("targets: give at least one exporter URL (--target) or a Prometheus server (--prometheus)")
	}
	for _, t := range c.Targets {
		u, err := url.Parse(t)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("target %q: want an http(s) URL such as http://127.0.0.1:8080/metrics", redact.URL(t))
		}
	}
	return nil
}

func (c *Config) defaults() {
	if c.Windows == 0 {
		c.Windows = DefaultWindows
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Interval == 0 {
		c.Interval = min(DefaultInterval, c.Window/2)
	}
	if c.Timeout == 0 {
		c.Timeout = min(max(c.Interval, time.Second), 10*time.Second)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// ticksPerWindow is how many scrape periods make one window.
func (c *Config) ticksPerWindow() int {
	return int(math.Ceil(float64(c.Window) / float64(c.Interval)))
}

// Run performs the capture: it scrapes every target at the start and then
// every Interval until Windows windows have passed, then computes the
// windows. A failed scrape is recorded and the capture goes on. When ctx
// ends early the windows so far are returned with ctx's error. When no
// scrape succeeded the capture is returned with an error wrapping
// ErrAllFailed.
//
// Every string of the capture returned has passed one redaction rule
// (Capture.Redact with cfg.Redact): URL passwords, credentials by
// content, and credential-named label values whatever they hold, in
// both modes.
func Run(ctx context.Context, cfg Config) (*Capture, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var c *Capture
	var err error
	if cfg.Prometheus != "" {
		c, err = runQuery(ctx, cfg)
	} else {
		c, err = runScrapes(ctx, cfg)
	}
	if c != nil {
		c.Redact(cfg.Redact)
	}
	return c, err
}

// runScrapes captures from exporters (Targets).
func runScrapes(ctx context.Context, cfg Config) (*Capture, error) {
	procs, err := newProcSampler(cfg.Processes, cfg.PIDs)
	if err != nil {
		return nil, err
	}
	sc := &Scraper{Client: cfg.Client, Timeout: cfg.Timeout, Selector: &cfg.Selector, Now: cfg.Now, Redact: cfg.Redact}
	k := cfg.ticksPerWindow()
	period := cfg.Window / time.Duration(k)
	start := cfg.Now()
	var ticks [][]Sample
	var runErr error
	for i := 0; i <= cfg.Windows*k; i++ {
		if i > 0 {
			if runErr = sleepUntil(ctx, start.Add(time.Duration(i)*period), cfg.Now); runErr != nil {
				break
			}
		}
		ticks = append(ticks, scrapeAll(ctx, sc, cfg.Targets))
		procs.sample(cfg.Now())
		if cfg.Progress != nil {
			cfg.Progress(Progress{Tick: i, Ticks: cfg.Windows * k, Window: i / k, Windows: cfg.Windows})
		}
	}
	c := assemble(cfg, ticks, k, start, period)
	c.Processes = procs.result()
	if runErr != nil {
		c.Notes = append(c.Notes, fmt.Sprintf("capture stopped early: %v", runErr))
		return c, runErr
	}
	if allFailed(c) {
		if le := overLimit(ticks); le != nil {
			return c, fmt.Errorf("capture of %v: %w: %w", redactAll(cfg.Targets), ErrAllFailed, le)
		}
		return c, fmt.Errorf("capture of %v: %w", redactAll(cfg.Targets), ErrAllFailed)
	}
	return c, nil
}

// overLimit returns the first scrape's *LimitError when every scrape
// failed on one (the exporter answers more than a capture reads).
func overLimit(ticks [][]Sample) *LimitError {
	var first *LimitError
	for _, tick := range ticks {
		for _, smp := range tick {
			var le *LimitError
			if !errors.As(smp.Err, &le) {
				return nil
			}
			if first == nil {
				first = le
			}
		}
	}
	return first
}

func sleepUntil(ctx context.Context, at time.Time, now func() time.Time) error {
	d := at.Sub(now())
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// scrapeAll scrapes every target concurrently; the result is in target order.
func scrapeAll(ctx context.Context, sc *Scraper, targets []string) []Sample {
	out := make([]Sample, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = sc.Scrape(ctx, t)
		}()
	}
	wg.Wait()
	return out
}

func allFailed(c *Capture) bool {
	for _, t := range c.Targets {
		if t.Failed < t.Scrapes {
			return false
		}
	}
	return true
}

// assemble turns the scrape timeline (ticks[i][target]) into a Capture.
func assemble(cfg Config, ticks [][]Sample, k int, start time.Time, period time.Duration) *Capture {
	c := &Capture{Schema: SchemaVersion, StartedAt: start, EndedAt: cfg.Now(),
		WindowSeconds: cfg.Window.Seconds(), IntervalSeconds: period.Seconds()}
	c.Targets = targetInfos(cfg.Targets, ticks)
	metrics := map[string]*Metric{}
	for w := 0; w < cfg.Windows; w++ {
		info := WindowInfo{Index: w, Start: start.Add(time.Duration(w*k) * period),
			End: start.Add(time.Duration((w+1)*k) * period)}
		for ti, target := range cfg.Targets {
			samples := windowSamples(ticks, w*k, (w+1)*k, ti)
			if good(samples) < 2 {
				info.Missing = append(info.Missing, target)
				continue
			}
			for key, v := range computeWindow(samples) {
				m := metricFor(metrics, target, key, v, cfg.Windows)
				m.Windows[w] = renderWindow(w, v)
			}
		}
		c.Windows = append(c.Windows, info)
	}
	c.Metrics = finishMetrics(metrics)
	for i, t := range c.Targets {
		if t.NonFinite > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: %d values were NaN or ±Inf and are left out (non_finite)", t.URL, t.NonFinite))
		}
		if d := duplicates(ticks, i); d > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: %d series repeated the name and labels of an earlier series of the same scrape and were left out (the first was kept)", t.URL, d))
		}
	}
	return c
}

// duplicates sums Sample.Duplicates of one target over the ticks.
func duplicates(ticks [][]Sample, target int) int {
	n := 0
	for _, tick := range ticks {
		n += tick[target].Duplicates
	}
	return n
}

func windowSamples(ticks [][]Sample, from, to, target int) []Sample {
	var out []Sample
	for i := from; i <= to && i < len(ticks); i++ {
		out = append(out, ticks[i][target])
	}
	return out
}

func good(samples []Sample) int {
	n := 0
	for _, s := range samples {
		if s.Err == nil {
			n++
		}
	}
	return n
}

func targetInfos(targets []string, ticks [][]Sample) []TargetInfo {
	out := make([]TargetInfo, len(targets))
	for i, t := range targets {
		out[i].URL = t
		for _, tick := range ticks {
			out[i].Scrapes++
			out[i].NonFinite += tick[i].NonFinite
			if err := tick[i].Err; err != nil {
				out[i].Failed++
				if len(out[i].Errors) < 5 {
					out[i].Errors = append(out[i].Errors, err.Error())
				}
			}
		}
	}
	return out
}

// metricFor returns the Metric of key on target, creating it with every
// window marked missing until filled.
func metricFor(ms map[string]*Metric, target, key string, v windowValue, n int) *Metric {
	id := target + " " + key
	if m, ok := ms[id]; ok {
		return m
	}
	m := &Metric{Target: target, Name: v.name, Labels: v.labels, Type: v.typ, Windows: make([]MetricWindow, n)}
	for i := range m.Windows {
		m.Windows[i] = MetricWindow{Index: i, Missing: true}
	}
	ms[id] = m
	return m
}

func renderWindow(i int, v windowValue) MetricWindow {
	if !isFinite(v.start) || !isFinite(v.end) || !isFinite(v.delta) { // finite inputs that overflowed
		return MetricWindow{Index: i, Missing: true}
	}
	w := MetricWindow{Index: i, Seconds: v.seconds, Start: v.start, End: v.end, Delta: v.delta, Resets: v.resets}
	switch v.typ {
	case TypeGauge, TypeUntyped:
		w.Mean, w.Max = num(v.mean), num(v.max)
		return w
	}
	if v.seconds > 0 {
		w.Rate = num(v.delta / v.seconds)
		if v.typ == TypeHistogram || v.typ == TypeSummary {
			w.SumRate = num(v.sumD / v.seconds)
		}
	}
	if v.typ == TypeHistogram {
		w.P50 = num(HistogramQuantile(0.50, v.buckets))
		w.P95 = num(HistogramQuantile(0.95, v.buckets))
		w.P99 = num(HistogramQuantile(0.99, v.buckets))
	}
	return w
}

// num is v as a JSON-safe optional number: nil for NaN and ±Inf.
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func finishMetrics(ms map[string]*Metric) []Metric {
	out := make([]Metric, 0, len(ms))
	for _, m := range ms {
		var xs []float64
		m.StatOf = "rate"
		if m.Type == TypeGauge || m.Type == TypeUntyped {
			m.StatOf = "mean"
		}
		total := 0.0
		for _, w := range m.Windows {
			if w.Missing {
				continue
			}
			total += w.Delta
			if p := w.Rate; p != nil {
				xs = append(xs, *p)
			} else if p := w.Mean; p != nil {
				xs = append(xs, *p)
			}
		}
		if !math.IsInf(total, 0) && !math.IsNaN(total) {
			m.TotalDelta = &total
		}
		m.Stats = Summarize(xs)
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Target != out[j].Target {
			return out[i].Target < out[j].Target
		}
		return SeriesKey(out[i].Name, out[i].Labels) < SeriesKey(out[j].Name, out[j].Labels)
	})
	return out
}

// redactAll masks the URL passwords of urls (for an error message).
func redactAll(urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = redact.URL(u)
	}
	return out
}
