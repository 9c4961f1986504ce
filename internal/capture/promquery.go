package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
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
	client, err := api.NewClient(api.Config{Address: cfg.Prometheus, Client: hc})
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", cfg.Prometheus, err)
	}
	prom := v1.NewAPI(client)
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
	for qi, q := range cfg.Queries {
		name := "prometheus " + cfg.Prometheus + " query " + q
		if err := fillQuery(ctx, prom, cfg, q, name, v1.Range{Start: start, End: end, Step: period}, ticks, qi); err != nil {
			return nil, err
		}
	}
	qcfg := cfg
	qcfg.Targets = make([]string, len(cfg.Queries))
	for i, q := range cfg.Queries {
		qcfg.Targets[i] = "query " + q
	}
	c := assemble(qcfg, ticks, k, start, period)
	c.Notes = append(c.Notes, fmt.Sprintf("from Prometheus %s over %s – %s", cfg.Prometheus, start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339)))
	if allFailed(c) {
		return c, fmt.Errorf("queries of %s: %w", cfg.Prometheus, ErrAllFailed)
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
func fillQuery(ctx context.Context, prom v1.API, cfg Config, q, name string, r v1.Range, ticks [][]Sample, qi int) error {
	cctx, cancel := context.WithTimeout(ctx, 4*cfg.Timeout)
	defer cancel()
	val, _, _, err := prom.QueryRange(cctx, q, r)
	if ae := (*v1.Error)(nil); errors.As(err, &ae) && ae.Type == v1.ErrBadData {
		return &QueryError{Query: q, Server: cfg.Prometheus, Msg: ae.Msg}
	}
	var series [][]Series
	if err == nil {
		series, err = spread(val, r, len(ticks))
	}
	for i := range ticks {
		smp := Sample{Target: name, At: r.Start.Add(time.Duration(i) * r.Step)}
		switch {
		case err != nil:
			smp.Err = fmt.Errorf("query %q at %s: %w", q, cfg.Prometheus, err)
			if cfg.Redact != nil { // the server's error text
				smp.Err = errors.New(cfg.Redact(smp.Err.Error()))
			}
		case len(series[i]) == 0:
			smp.Err = errNoData
		default:
			// a step whose every value is NaN or ±Inf was answered: it
			// is no failure, it only has nothing to keep
			kept, dropped := dropNonFinite(series[i])
			smp.NonFinite = dropped
			smp.Series, smp.Err = cfg.Selector.Apply(name, kept)
		}
		ticks[i][qi] = smp
	}
	return nil
}

// spread puts each point of a range-query matrix on its step.
func spread(val model.Value, r v1.Range, n int) ([][]Series, error) {
	m, ok := val.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("query returned %s, want a range vector (matrix)", val.Type())
	}
	out := make([][]Series, n)
	for _, ss := range m {
		base := seriesOf(ss.Metric)
		for _, p := range ss.Values {
			i := int(math.Round(float64(p.Timestamp.Time().Sub(r.Start)) / float64(r.Step)))
			if i < 0 || i >= n {
				continue
			}
			s := base
			s.Value = float64(p.Value)
			out[i] = append(out[i], s)
		}
	}
	return out, nil
}

// seriesOf names a result series by __name__ (an expression result has
// none: it is "value"); counters are recognised by their conventional
// suffixes, everything else is a gauge.
func seriesOf(m model.Metric) Series {
	s := Series{Name: string(m[model.MetricNameLabel]), Type: TypeGauge}
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
		s.Labels[string(k)] = string(v)
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
