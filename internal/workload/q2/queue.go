package q2

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/sagebench/sagebench/internal/capture"
	"github.com/sagebench/sagebench/internal/target"
)

// QueueMetrics are the metric names that hold a serving engine's queue
// of waiting requests, tried in order when q2.queue_metric.name is empty.
var QueueMetrics = []string{"vllm:num_requests_waiting", "sglang:num_queue_reqs", "tgi_queue_size", "sagebench_gateway_queue_depth"}

// QueueMetric says where Q2 reads the queue depth when the target sends
// no X-Sagebench-Queue-Us: a gauge of the target's /metrics (summed over
// its series), sampled every Interval during each sub-run. Its zero
// value is the default (the known names, every 250 ms), left out of the
// effective config so that it does not change config_hash: it sends no
// request.
type QueueMetric struct {
	Name     string        `yaml:"name,omitempty" json:"name,omitempty"`         // "" = the first of QueueMetrics the target exposes
	Interval time.Duration `yaml:"interval,omitempty" json:"interval,omitempty"` // 0 = DefaultQueueInterval
}

// DefaultQueueInterval is how often the queue gauge is sampled by default.
const DefaultQueueInterval = 250 * time.Millisecond

// every is the sampling interval.
func (m QueueMetric) every() time.Duration {
	if m.Interval == 0 {
		return DefaultQueueInterval
	}
	return m.Interval
}

// validMetricName is a Prometheus metric name.
var validMetricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// Validate names the key.
func (m QueueMetric) Validate() error {
	switch {
	case m.Name != "" && !validMetricName.MatchString(m.Name):
		return fmt.Errorf("q2.queue_metric.name %q: not a Prometheus metric name", m.Name)
	case m.Interval != 0 && (m.Interval < 10*time.Millisecond || m.Interval > 10*time.Second):
		return fmt.Errorf("q2.queue_metric.interval %v: want 10ms to 10s (0: %v)", m.Interval, DefaultQueueInterval)
	}
	return nil
}

// depthSample is the queue depth the target reported at an offset from
// the run's start.
type depthSample struct {
	at    time.Duration
	depth float64
}

// queueSampler samples the target's queue gauge during a sub-run.
type queueSampler struct {
	url   string
	names []string
	every time.Duration
	sc    *capture.Scraper
	start time.Time // the run's start: samples are offsets from it
	clean func(string) string

	mu      sync.Mutex
	name    string // the metric found ("" until one is)
	samples []depthSample
	err     error  // the last scrape's failure
	errLine string // read back (queue.json): the failure's line as recorded
}

// newQueueSampler prepares a sampler of t's /metrics; nil when the
// target has no /metrics URL.
func newQueueSampler(t *target.Target, m QueueMetric, start time.Time) *queueSampler {
	url, err := capture.MetricsURL(t.URL())
	if err != nil {
		return nil
	}
	names := QueueMetrics
	if m.Name != "" {
		names = []string{m.Name}
	}
	sel := &capture.Selector{Names: quoteNames(names), MaxSeries: 256}
	if sel.Compile() != nil {
		return nil
	}
	clean := func(s string) string { return s }
	if r := t.Redactor(); r != nil {
		clean = r.String
	}
	return &queueSampler{url: url, names: names, every: m.every(), start: start, clean: clean,
		sc: &capture.Scraper{Timeout: max(m.every(), time.Second), Selector: sel}}
}

// quoteNames makes metric names regular expressions matching themselves.
func quoteNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = regexp.QuoteMeta(n)
	}
	return out
}

// run samples until ctx ends.
func (s *queueSampler) run(ctx context.Context) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		s.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sample scrapes once and keeps the depth of the first metric found.
func (s *queueSampler) sample(ctx context.Context) {
	smp := s.sc.Scrape(ctx, s.url)
	s.mu.Lock()
	defer s.mu.Unlock()
	if smp.Err != nil {
		if ctx.Err() == nil {
			s.err = smp.Err
		}
		return
	}
	sums := map[string]float64{}
	for _, se := range smp.Series {
		if v := se.Value; v >= 0 && !math.IsInf(v, 0) {
			sums[se.Name] += v
		}
	}
	if s.name == "" {
		for _, n := range s.names {
			if _, ok := sums[n]; ok {
				s.name = n
				break
			}
		}
	}
	if v, ok := sums[s.name]; ok && s.name != "" {
		s.samples = append(s.samples, depthSample{at: smp.At.Sub(s.start), depth: v})
	}
}

// within returns the samples in [from, to) and the metric's name.
func (s *queueSampler) within(from, to time.Duration) ([]depthSample, string) {
	if s == nil {
		return nil, ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []depthSample
	for _, x := range s.samples {
		if x.at >= from && x.at < to {
			out = append(out, x)
		}
	}
	return out, s.name
}

// why says why no depth was read.
func (s *queueSampler) why() string {
	base := "the target reported no queue wait (X-Sagebench-Queue-Us)"
	switch {
	case s == nil:
		return base + " and has no /metrics URL"
	case s.name == "" && s.failure() != "":
		return base + " and its /metrics, where " + strings.Join(s.names, ", ") + " were looked for, could not be read: " + s.failure()
	case s.name == "":
		return base + " and its /metrics has none of " + strings.Join(s.names, ", ") + " (set q2.queue_metric.name)"
	}
	return base + " and no sample of " + s.name + " fell in the sub-runs"
}

// failure is the last scrape's failure as one redacted line ("": none).
func (s *queueSampler) failure() string {
	if s.err == nil {
		return s.errLine
	}
	return s.clean(firstLine(s.err))
}

func firstLine(err error) string {
	var pe *capture.ParseError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// gaugeOccupancy is the queue's occupancy from samples of its depth:
// each sample holds until the next (the last for the mean spacing); busy
// is the share of that time with at least one request waiting.
func gaugeOccupancy(xs []depthSample) (busy, mean, maxDepth float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	var total, busyT, area float64
	for i, x := range xs {
		w := 1.0
		if i+1 < len(xs) {
			w = (xs[i+1].at - x.at).Seconds()
		} else if len(xs) > 1 {
			w = (x.at - xs[0].at).Seconds() / float64(len(xs)-1)
		}
		total += w
		area += w * x.depth
		if x.depth > 0 {
			busyT += w
		}
		maxDepth = max(maxDepth, x.depth)
	}
	return busyT / total, area / total, maxDepth
}
