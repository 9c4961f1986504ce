package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/redact"
)

// acceptHeader asks for OpenMetrics 1.0 first, then the classic text format.
const acceptHeader = "application/openmetrics-text;version=1.0.0;q=0.9,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// Bounds of one scrape, after Prometheus's body_size_limit and
// sample_limit: a scrape over any of them fails as a whole (a
// *LimitError) and the next one is tried as usual. They keep what a
// hostile exporter can make the harness parse and hold to tens of
// megabytes (a 32 MiB body of one label took 1.8 GB to parse).
const (
	DefaultMaxScrapeBytes = 16 << 20 // exposition bytes
	DefaultMaxLineBytes   = 64 << 10 // one line of the text formats
	DefaultMaxSamples     = 100_000  // sample lines (each histogram bucket is one)
	// MaxKeyBytes bounds a series key (name{labels}, once redacted): a
	// longer series is left out of the scrape and counted
	// (Sample.Dropped), the rest of the scrape is kept.
	MaxKeyBytes = 1024
)

// Limits bound one scrape; zero fields take the defaults above.
type Limits struct {
	MaxBytes     int64
	MaxLineBytes int
	MaxSamples   int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxScrapeBytes
	}
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultMaxLineBytes
	}
	if l.MaxSamples <= 0 {
		l.MaxSamples = DefaultMaxSamples
	}
	return l
}

// LimitError is a scrape over one of its Limits.
type LimitError struct {
	Source string
	What   string // "bytes", "bytes in one line", "samples"
	Limit  int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: over %d %s: scrape skipped (an exporter's answer is bounded, see docs/capture.md)", e.Source, e.Limit, e.What)
}

// Sample is one scrape of one target: its series, or the error that
// made it fail. NonFinite counts the series left out of Series because a
// value was NaN or ±Inf.
type Sample struct {
	Target    string
	At        time.Time
	Series    []Series
	NonFinite int
	Err       error
	// Dropped counts the series left out for a key over MaxKeyBytes.
	Dropped int
	// Duplicates counts the series left out for repeating the key (name
	// and labels, as redacted) of an earlier one of the same scrape.
	Duplicates int
}

// Scraper fetches and parses exposition text.
type Scraper struct {
	Client   *http.Client // nil: a client with Timeout
	Timeout  time.Duration
	Selector *Selector // nil: keep everything (cap DefaultMaxSeries)
	Now      func() time.Time
	Limits   Limits
	// Redact, when set, is applied to every metric name, label name and
	// label value kept, and to error texts (redact.Redactor.String: an
	// exporter's labels can hold anything, a credential included). The
	// value of a credential-named label (password, api_key, …) is masked
	// whole, and URL passwords in values are masked, even when it is nil.
	Redact func(string) string
}

func (s *Scraper) client() *http.Client {
	if s.Client != nil {
		return withSameOrigin(s.Client) // a client without a redirect policy gets ours
	}
	t := s.Timeout
	if t <= 0 {
		t = 5 * time.Second
	}
	return &http.Client{Timeout: t, CheckRedirect: sameOrigin}
}

func (s *Scraper) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Scrape fetches url once. Failures are returned in Sample.Err, never
// panics: a dead exporter is a missing sample, not the end of a capture.
func (s *Scraper) Scrape(ctx context.Context, url string) Sample {
	smp := Sample{Target: url, At: s.now()}
	series, err := s.fetch(ctx, url)
	if err == nil && s.Selector != nil {
		series, err = s.Selector.Apply(url, series)
	} else if err == nil {
		series, err = (&Selector{}).Apply(url, series)
	}
	series, smp.NonFinite = dropNonFinite(series)
	smp.Series, smp.Dropped, smp.Duplicates = s.keep(series)
	smp.Err = err
	if err != nil {
		smp.Err = s.clean(err)
	}
	return smp
}

// dropNonFinite returns series without those holding a NaN or ±Inf
// value, count, sum or bucket count (a bucket's +Inf bound is its name,
// not a value), and how many it left out.
func dropNonFinite(series []Series) ([]Series, int) {
	out := series[:0]
	for _, s := range series {
		if s.finite() {
			out = append(out, s)
		}
	}
	return out, len(series) - len(out)
}

func (s Series) finite() bool {
	if !isFinite(s.Value) || !isFinite(s.Count) || !isFinite(s.Sum) {
		return false
	}
	for _, b := range s.Buckets {
		if !isFinite(b.Count) || math.IsNaN(b.UpperBound) {
			return false
		}
	}
	return true
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// keep redacts the series and leaves out those whose key is over
// MaxKeyBytes (counted in dropped) and those repeating the key of an
// earlier one in the same scrape, as redacted (counted in dups: two
// values of one series in one scrape would make every window wrong).
func (s *Scraper) keep(in []Series) (out []Series, dropped, dups int) {
	out = in[:0]
	seen := make(map[string]bool, len(in))
	for _, x := range in {
		if s.Redact != nil {
			x.Name = s.Redact(x.Name)
		}
		x.Labels = redactLabels(s.Redact, x.Labels) // credential-named labels masked whatever Redact is
		key := x.Key()
		switch {
		case len(key) > MaxKeyBytes:
			dropped++
			continue
		case seen[key]:
			dups++
			continue
		}
		seen[key] = true
		out = append(out, x)
	}
	return out, dropped, dups
}

// clean redacts an error's text; errors.As still finds a *LimitError.
func (s *Scraper) clean(err error) error {
	if s.Redact == nil {
		return err
	}
	if msg := s.Redact(err.Error()); msg != err.Error() {
		var le *LimitError
		if errors.As(err, &le) {
			return le
		}
		return errors.New(msg)
	}
	return err
}

func (s *Scraper) fetch(ctx context.Context, url string) ([]Series, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", redact.URL(url), err)
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := s.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", redact.URL(url), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("scraping %s: HTTP %s", redact.URL(url), resp.Status)
	}
	lim := s.Limits.withDefaults()
	body := &boundedBody{r: resp.Body, lim: lim, text: isText(resp.Header.Get("Content-Type"))}
	series, err := parseLimited(body, resp.Header.Get("Content-Type"), redact.URL(url), lim.MaxSamples)
	if body.over != nil {
		body.over.Source = redact.URL(url)
		return nil, body.over
	}
	if err == nil && len(series) > lim.MaxSamples {
		return nil, &LimitError{Source: redact.URL(url), What: "samples", Limit: int64(lim.MaxSamples)}
	}
	return series, err
}

// isText reports whether a Content-Type is one of the line-based
// exposition formats (all but protobuf).
func isText(contentType string) bool {
	return !strings.Contains(contentType, "protobuf")
}

// boundedBody reads an exposition, failing (and recording why in over)
// past Limits: the parser never holds more than a line's worth of a
// hostile answer beyond what the limits allow.
type boundedBody struct {
	r       io.Reader
	lim     Limits
	text    bool
	n       int64 // bytes read
	line    int   // bytes since the last newline
	samples int   // lines that are not comments
	over    *LimitError
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.over != nil {
		return 0, b.over
	}
	if n := b.lim.MaxBytes + 1 - b.n; int64(len(p)) > n {
		p = p[:n]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.lim.MaxBytes {
		b.over = &LimitError{What: "bytes", Limit: b.lim.MaxBytes}
		return 0, b.over
	}
	if b.text && b.scan(p[:n]) {
		return 0, b.over
	}
	return n, err
}

// scan counts lines and sample lines of a text exposition; it reports
// whether a limit was passed.
func (b *boundedBody) scan(p []byte) bool {
	for len(p) > 0 {
		if b.line == 0 && p[0] != '#' && p[0] != '\n' {
			b.samples++
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.line += len(p)
			break
		}
		b.line += i
		if b.line > b.lim.MaxLineBytes {
			break
		}
		b.line, p = 0, p[i+1:]
	}
	switch {
	case b.line > b.lim.MaxLineBytes:
		b.over = &LimitError{What: "bytes in one line", Limit: int64(b.lim.MaxLineBytes)}
	case b.samples > b.lim.MaxSamples:
		b.over = &LimitError{What: "samples", Limit: int64(b.lim.MaxSamples)}
	}
	return b.over != nil
}
