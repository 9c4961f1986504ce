package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/sagebench/sagebench/internal/redact"
)

// errNoData marks a query step without any series.
var errNoData = errors.New("no data at this step")

// validateQuery checks the Prometheus-server form of a Config.
func (c *Config) validateQuery() error {
	u, err := url.Parse(c.Prometheus)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("prometheus %q: want the server's http(s) URL such as http://127.0.0.1:9090", redact.URL(c.Prometheus))
	}
	if len(c.Targets) > 0 {
		return errors.New("targets and prometheus: give exporter URLs or a Prometheus server, not both")
	}
	if len(c.Queries) == 0 {
		return errors.New("queries: give at least one PromQL expression (--query) with --prometheus")
	}
	for _, q := range c.Queries {
		if strings.TrimSpace(q) == "" {
			return errors.New("queries: an empty PromQL expression")
		}
	}
	return nil
}

// runQuery captures from a Prometheus server: every query is evaluated
// over the Windows × Window ending at End (now when zero) with one step
// per Interval through /api/v1/query_range, and the steps are windowed
// like scrapes. Each query is one "target" of the capture.
func runQuery(ctx context.Context, cfg Config) (*Capture, error) {
	hc := cfg.Client
	if hc == nil {
		hc = &http.Client{Transport: boundedAnswers{rt: http.DefaultTransport, limit: DefaultMaxScrapeBytes}}
	}
	hc = withSameOrigin(hc)
	server := redact.URL(cfg.Prometheus) // the only form of the URL that is printed or written
	k := cfg.ticksPerWindow()
	period := cfg.Window / time.Duration(k)
	end := cfg.End
	if end.IsZero() {
		end = cfg.Now()
	}
	start := end.Add(-time.Duration(cfg.Windows*k) * period)
	n := cfg.Windows*k + 1
	ticks := make([][]Sample, n)
	for i := range ticks {
		ticks[i] = make([]Sample, len(cfg.Queries))
	}
	var notes []string
	for qi, q := range cfg.Queries {
		dup, err := fillQuery(ctx, hc, cfg, q, rangeSpec{start: start, end: end, step: period, n: n}, ticks, qi)
		if err != nil {
			return nil, err
		}
		if dup > 0 {
			notes = append(notes, fmt.Sprintf("query %s: %d series repeated the labels of an earlier series of the same answer and were left out (the first was kept)", q, dup))
		}
	}
	qcfg := cfg
	qcfg.Targets = make([]string, len(cfg.Queries))
	for i, q := range cfg.Queries {
		qcfg.Targets[i] = "query " + q
	}
	c := assemble(qcfg, ticks, k, start, period)
	c.Notes = append(c.Notes, notes...)
	c.Notes = append(c.Notes, fmt.Sprintf("from Prometheus %s over %s – %s", server, start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339)))
	if allFailed(c) {
		if le := overLimit(ticks); le != nil {
			return c, fmt.Errorf("queries of %s: %w: %w", server, ErrAllFailed, le)
		}
		return c, fmt.Errorf("queries of %s: %w", server, ErrAllFailed)
	}
	return c, nil
}

// QueryError is a query the Prometheus server refused as bad input (a
// PromQL syntax error, an unknown function): a usage error, not a failed
// scrape.
type QueryError struct {
	Query, Server, Msg string
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("query %q: Prometheus %s refused it: %s", e.Query, e.Server, e.Msg)
}

// fillQuery evaluates one query and spreads its points over the ticks
// (column qi); a failed query fails every tick, a step without points
// is errNoData. A query the server refuses as bad data is a *QueryError.
// It returns how many duplicate series the answer held.
func fillQuery(ctx context.Context, hc *http.Client, cfg Config, q string, r rangeSpec, ticks [][]Sample, qi int) (int, error) {
	cctx, cancel := context.WithTimeout(ctx, 4*cfg.Timeout)
	defer cancel()
	server := redact.URL(cfg.Prometheus)
	ans, err := queryRange(cctx, hc, cfg.Prometheus, q, r, &cfg.Selector)
	if qe := (*QueryError)(nil); errors.As(err, &qe) {
		qe.Server, qe.Msg = server, cleanText(cfg.Redact, qe.Msg)
		return 0, qe
	}
	if le := (*LimitError)(nil); errors.As(err, &le) { // our text: kept a *LimitError for the exit code
		err = fmt.Errorf("query %q at %s: %w", q, server, le)
	} else if err != nil {
		err = errors.New(cleanText(cfg.Redact, fmt.Sprintf("query %q at %s: %v", q, server, err)))
	}
	dup := 0
	if ans != nil {
		dup = ans.duplicates
	}
	name := "prometheus " + server + " query " + q
	for i := range ticks {
		smp := Sample{Target: name, At: r.start.Add(time.Duration(i) * r.step)}
		switch {
		case err != nil:
			smp.Err = err
		case len(ans.steps[i]) == 0:
			smp.Err = errNoData
		default:
			// a step whose every value is NaN or ±Inf was answered: it
			// is no failure, it only has nothing to keep
			kept, dropped := dropNonFinite(ans.steps[i])
			smp.NonFinite = dropped
			smp.Series, smp.Err = cfg.Selector.Apply(name, kept)
		}
		ticks[i][qi] = smp
	}
	return dup, nil
}

// cleanText applies rule (nil: URL passwords only) to a text a peer
// wrote (the server's error) or that quotes the command line.
func cleanText(rule func(string) string, s string) string {
	if rule == nil {
		return redact.URL(s)
	}
	return rule(s)
}

// seriesOf names a result series by __name__ (an expression result has
// none: it is "value"); counters are recognised by their conventional
// suffixes, everything else is a gauge.
func seriesOf(m map[string]string) Series {
	s := Series{Name: m[model.MetricNameLabel], Type: TypeGauge}
	if s.Name == "" {
		s.Name = "value"
	}
	for k, v := range m {
		if k == model.MetricNameLabel {
			continue
		}
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[k] = v
	}
	for _, suf := range []string{"_total", "_count", "_sum", "_bucket"} {
		if strings.HasSuffix(s.Name, suf) {
			s.Type = TypeCounter
		}
	}
	return s
}

// boundedAnswers fails a Prometheus answer past limit bytes (the client
// reads whole bodies): a hostile server cannot make a capture hold more.
type boundedAnswers struct {
	rt    http.RoundTripper
	limit int64
}

func (b boundedAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, limit: b.limit, source: req.URL.Redacted()}
	return resp, nil
}

// limitedBody errs with a *LimitError past limit bytes.
type limitedBody struct {
	io.ReadCloser
	limit  int64
	n      int64
	source string
}

func (l *limitedBody) Read(p []byte) (int, error) {
	n, err := l.ReadCloser.Read(p)
	if l.n += int64(n); l.n > l.limit {
		return 0, &LimitError{Source: l.source, What: "bytes", Limit: l.limit}
	}
	return n, err
}
