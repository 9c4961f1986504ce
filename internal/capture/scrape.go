package capture

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"
)

// acceptHeader asks for OpenMetrics 1.0 first, then the classic text format.
const acceptHeader = "application/openmetrics-text;version=1.0.0;q=0.9,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// maxBody bounds the exposition text read from one scrape.
const maxBody = 32 << 20

// Sample is one scrape of one target: its series, or the error that
// made it fail. NonFinite counts the series left out of Series because a
// value was NaN or ±Inf.
type Sample struct {
	Target    string
	At        time.Time
	Series    []Series
	NonFinite int
	Err       error
}

// Scraper fetches and parses exposition text.
type Scraper struct {
	Client   *http.Client // nil: a client with Timeout
	Timeout  time.Duration
	Selector *Selector // nil: keep everything (cap DefaultMaxSeries)
	Now      func() time.Time
}

func (s *Scraper) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	t := s.Timeout
	if t <= 0 {
		t = 5 * time.Second
	}
	return &http.Client{Timeout: t}
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
	smp.Series, smp.NonFinite = dropNonFinite(series)
	smp.Err = err
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

func (s *Scraper) fetch(ctx context.Context, url string) ([]Series, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := s.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("scraping %s: HTTP %s", url, resp.Status)
	}
	return Parse(io.LimitReader(resp.Body, maxBody), resp.Header.Get("Content-Type"), url)
}
