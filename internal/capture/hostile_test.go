package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// promMatrix answers every query_range with the series that body writes
// between `"result":[` and `]`, each at every step (body gets the
// points' JSON).
func promMatrix(t *testing.T, body func(w http.ResponseWriter, points string)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
		step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
		var pts []string
		for i := 0; start+float64(i)*step <= end+1e-9; i++ {
			pts = append(pts, fmt.Sprintf(`[%g,"%%s"]`, start+float64(i)*step))
		}
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[`)
		body(w, "["+strings.Join(pts, ",")+"]")
		fmt.Fprint(w, `]}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func queryCfg(url string) Config {
	return Config{Prometheus: url, Queries: []string{"up"}, Windows: 2, Window: 20 * time.Second,
		Interval: 10 * time.Second, End: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), Timeout: 10 * time.Second}
}

// TestQueryNonFiniteStringsAndDuplicates (issue 41, hole 7): "1e309" is
// +Inf, counted as non-finite, not a failed query; a series repeated in
// one answer is kept once and noted.
func TestQueryNonFiniteStringsAndDuplicates(t *testing.T) {
	srv := promMatrix(t, func(w http.ResponseWriter, pts string) {
		fmt.Fprintf(w, `{"metric":{"s":"big"},"values":%s},`, strings.ReplaceAll(pts, "%s", "1e309"))
		fmt.Fprintf(w, `{"metric":{"s":"ok"},"values":%s},`, strings.ReplaceAll(pts, "%s", "1"))
		fmt.Fprintf(w, `{"metric":{"s":"ok"},"values":%s}`, strings.ReplaceAll(pts, "%s", "2"))
	})
	c, err := Run(context.Background(), queryCfg(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if c.Targets[0].Failed != 0 || c.Targets[0].NonFinite != 5 {
		t.Errorf("target %+v: want no failed step and 5 non-finite values (1e309 at each step)", c.Targets[0])
	}
	if len(c.Metrics) != 1 || *c.Metrics[0].Windows[0].Mean != 1 {
		t.Errorf("metrics %+v: want the first series s=ok (value 1) alone", c.Metrics)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "1 series repeated the labels") {
		t.Errorf("notes %q: want the duplicate series noted", c.Notes)
	}
}

// TestQuerySeriesCappedWhileStreaming (issue 41, hole 7): an answer of
// 256k series is refused at the cardinality cap while it is read; it
// used to be decoded whole (443 MB RSS, 9.4 s) before max-series
// refused it.
func TestQuerySeriesCappedWhileStreaming(t *testing.T) {
	var written atomic.Int64
	srv := promMatrix(t, func(w http.ResponseWriter, pts string) {
		one := strings.ReplaceAll(pts, "%s", "1")
		for i := range 256 << 10 {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			n, err := fmt.Fprintf(w, `{"metric":{"__name__":"x","id":"%d"},"values":%s}`, i, one)
			if err != nil {
				return
			}
			written.Add(int64(n))
		}
	})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c, err := Run(context.Background(), queryCfg(srv.URL))
	runtime.ReadMemStats(&after)
	if err == nil || c.Targets[0].Failed != c.Targets[0].Scrapes || !strings.Contains(c.Targets[0].Errors[0], "more than the cap of 2000") {
		t.Fatalf("err %v, capture %+v: want every step failed on the cardinality cap", err, c.Targets)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("allocated %d MB to refuse the answer, want a few (streamed)", alloc>>20)
	}
}

// TestQueryRedirectRefused (issue 41, hole 7): a 307 to another origin
// is not followed; nothing reaches the other server.
func TestQueryRedirectRefused(t *testing.T) {
	var hits atomic.Int32
	other := promMatrix(t, func(w http.ResponseWriter, pts string) {
		hits.Add(1)
		fmt.Fprintf(w, `{"metric":{"s":"evil"},"values":%s}`, strings.ReplaceAll(pts, "%s", "1"))
	})
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	c, err := Run(context.Background(), queryCfg(redirector.URL))
	if !errors.Is(err, ErrAllFailed) || len(c.Metrics) != 0 || hits.Load() != 0 {
		t.Errorf("err %v, %d metrics, %d requests at the other origin: want every query failed and none there", err, len(c.Metrics), hits.Load())
	}
	// the exporter path too (capture, and run's metrics.jsonl through
	// Recorder), with the default client or one given without a policy
	for _, sc := range []*Scraper{{}, {Client: &http.Client{Timeout: 5 * time.Second}}} {
		smp := sc.Scrape(context.Background(), redirector.URL+"/metrics")
		if smp.Err == nil || !strings.Contains(smp.Err.Error(), "another origin") || hits.Load() != 0 {
			t.Errorf("scrape through a cross-origin redirect: %v (%d hits), want refused", smp.Err, hits.Load())
		}
	}
}

// TestSameOriginRedirectFollowed: /metrics → /metrics/ on the same
// server is followed.
func TestSameOriginRedirectFollowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			http.Redirect(w, r, "/metrics/", http.StatusMovedPermanently)
			return
		}
		fmt.Fprint(w, "up 1\n")
	}))
	t.Cleanup(srv.Close)
	if smp := (&Scraper{}).Scrape(context.Background(), srv.URL+"/metrics"); smp.Err != nil || len(smp.Series) != 1 {
		t.Errorf("same-origin redirect: %v, %d series", smp.Err, len(smp.Series))
	}
}

// TestQueryModeRedactsLabelsAndURL (issue 41, holes 1–2): the server's
// URL password and credential labels — by name and by content — reach
// no string of the capture.
func TestQueryModeRedactsLabelsAndURL(t *testing.T) {
	srv := promMatrix(t, func(w http.ResponseWriter, pts string) {
		fmt.Fprintf(w, `{"metric":{"__name__":"db_up","authorization":"Bearer sk-live-abcdef123456","instance":"http://bob:hunter2pw@db:5432","password":"pw-plain-1","API-Key":"key-plain-2","job":"db"},"values":%s}`,
			strings.ReplaceAll(pts, "%s", "1"))
	})
	u := strings.Replace(srv.URL, "http://", "http://alice:S3CRETPW@", 1)
	c, err := Run(context.Background(), queryCfg(u))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := EncodeJSON(c)
	var md strings.Builder
	_ = WriteMarkdown(&md, c)
	for _, secret := range []string{"S3CRETPW", "sk-live-abcdef123456", "hunter2pw", "pw-plain-1", "key-plain-2"} {
		if strings.Contains(string(js), secret) || strings.Contains(md.String(), secret) {
			t.Errorf("%q written:\n%s", secret, js)
		}
	}
	if len(c.Metrics) != 1 || c.Metrics[0].Labels["job"] != "db" {
		t.Errorf("metrics %+v: want db_up kept with its other labels", c.Metrics)
	}
}

// answerTransport answers every request with body.
type answerTransport struct{ body []byte }

func (a answerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(a.body)), Request: req}, nil
}

// FuzzQueryAnswer feeds arbitrary Prometheus answers to the streaming
// query_range reader: an error or a bounded result, never a panic, and
// no point off its steps.
func FuzzQueryAnswer(f *testing.F) {
	for _, s := range []string{
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","job":"a"},"values":[[1000,"1"],[1010,"1e309"],[1020,"NaN"]]}]}}`,
		`{"data":{"result":[{"metric":{},"values":[[1e300,"1"],[-5,"2"]]},{"metric":{},"values":[]}],"resultType":"matrix"},"status":"success"}`,
		`{"status":"error","errorType":"bad_data","error":"parse error"}`,
		`{"status":"success","data":{"resultType":"vector","result":[]}}`,
		`{"status":"success","data":null}`, `[]`, `{"status":"success","data":{"result":[{"values":[[1,2]]}]}}`,
	} {
		f.Add([]byte(s))
	}
	sel := &Selector{MaxSeries: 50}
	if err := sel.Compile(); err != nil {
		f.Fatal(err)
	}
	r := rangeSpec{start: time.Unix(1000, 0), end: time.Unix(1040, 0), step: 10 * time.Second, n: 5}
	f.Fuzz(func(t *testing.T, body []byte) {
		hc := &http.Client{Transport: answerTransport{body}}
		a, err := queryRange(context.Background(), hc, "http://prom", "up", r, sel)
		if err != nil {
			return
		}
		if len(a.steps) != r.n {
			t.Fatalf("%d steps, want %d", len(a.steps), r.n)
		}
		for _, step := range a.steps {
			if len(step) > 50 {
				t.Fatalf("%d series at one step, over the cap", len(step))
			}
		}
	})
}

// TestScrapeDuplicatesLeftOutAndNoted: a series repeated in one scrape —
// verbatim, or differing only in a credential label that the rule masks —
// is kept once and noted; two values of one series in one scrape made
// every window of it wrong.
func TestScrapeDuplicatesLeftOutAndNoted(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := n.Add(1)
		fmt.Fprintf(w, "# TYPE jobs_total counter\njobs_total{a=\"1\"} %d\njobs_total{a=\"1\"} 999\ndb_up{password=\"one\"} 1\ndb_up{password=\"two\"} 0\n", v)
	}))
	t.Cleanup(srv.Close)
	smp := (&Scraper{}).Scrape(context.Background(), srv.URL)
	if smp.Err != nil || len(smp.Series) != 2 || smp.Duplicates != 2 {
		t.Fatalf("scrape: %v, %d series, %d duplicates; want 2 kept and 2 duplicates", smp.Err, len(smp.Series), smp.Duplicates)
	}
	c, err := Run(context.Background(), Config{Targets: []string{srv.URL}, Windows: 1, Window: 40 * time.Millisecond, Interval: 20 * time.Millisecond, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "series repeated the name and labels") {
		t.Errorf("notes %q: want the duplicates noted", c.Notes)
	}
	for _, m := range c.Metrics {
		if m.Name == "jobs_total" && m.Windows[0].Resets != 0 {
			t.Errorf("jobs_total window %+v: the repeated series made resets", m.Windows[0])
		}
	}
}

// TestQueryAnswerSeriesBounded: an answer of more than MaxAnswerSeries
// series fails while it is read even when none matches the selector,
// as a *LimitError (capture exits 2 on it, as on an exporter's).
func TestQueryAnswerSeriesBounded(t *testing.T) {
	srv := promMatrix(t, func(w http.ResponseWriter, pts string) {
		for i := range MaxAnswerSeries + 10 {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			if _, err := fmt.Fprintf(w, `{"metric":{"__name__":"x","id":"%d"},"values":[]}`, i); err != nil {
				return
			}
		}
	})
	cfg := queryCfg(srv.URL)
	cfg.Selector = Selector{Names: []string{"nothing"}}
	_, err := Run(context.Background(), cfg)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != MaxAnswerSeries || !errors.Is(err, ErrAllFailed) {
		t.Errorf("err %v, want every query failed on a *LimitError of %d series", err, MaxAnswerSeries)
	}
}
